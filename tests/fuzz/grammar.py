"""Random filter programs from ndjit's language (README, "The language"), as small trees.

A program is ``def f(x):`` over a list of statements. Expressions are :class:`Expr` nodes: a format
string over typed children, so that rendering, shrinking (replace a node by a child or a constant
of its type) and tagging stay generic. Types are the four the language has: ``f`` (float: the
buffer's np.float64 or a Python float), ``i`` (Python int), ``b`` (bool) and ``a`` (1-D float64
array). Programs are well typed by construction, so most of them compile and the comparison
exercises semantics rather than the type checker; loops terminate by construction (bounded
``range``s, ``while`` with a counter incremented first), so the CPython oracle cannot hang.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

@dataclass
class Expr:
    """``fmt.format(*children)``; ``ofmt`` is the oracle's rendering where it differs (``**``)."""

    ty: str
    fmt: str
    children: List["Expr"] = field(default_factory=list)
    ofmt: Optional[str] = None

    def render(self, oracle: bool = False) -> str:
        parts = [c.render(oracle) for c in self.children]
        if oracle and self.ty == "i":
            # ``_i`` raises OverflowError for a Python int past 64 bits: ndjit's specified
            # behaviour (issue 12, item 3), where CPython would go on with a big int.
            return "_i(" + self._render(parts, oracle) + ")"
        return self._render(parts, oracle)

    def _render(self, parts: List[str], oracle: bool) -> str:
        if oracle and self.ofmt:
            # ``_pow(a, b, literal)``: the oracle substitutes ndjit's power, which may depend on
            # whether the exponent is a literal (oracle.Substitutions.power).
            last = self.children[-1]
            literal = repr(parts[-1]) if not last.children and _is_number(parts[-1]) else "None"
            return self.ofmt.format(*parts, literal=literal)
        return self.fmt.format(*parts)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


POW_ORACLE = "_pow({0}, {1}, {literal})"


@dataclass
class Stmt:
    """One statement. ``head`` is a format over ``exprs``; ``blocks`` are (header, statements)
    pairs rendered after the head: an ``if`` has its body and ``else``, a loop its body."""

    head: str
    exprs: List[Expr] = field(default_factory=list)
    blocks: List[Tuple[str, List["Stmt"]]] = field(default_factory=list)
    # A ``while`` needs its counter reset before the loop (``pre``) and bumped first in the body.
    pre: Optional[str] = None
    bump: Optional[str] = None

    def render(self, indent: int, oracle: bool) -> List[str]:
        pad = "    " * indent
        lines = [pad + self.pre] if self.pre else []
        rendered = [e.render(oracle) for e in self.exprs]
        lines.append(pad + self.head.format(*rendered))
        for i, (header, body) in enumerate(self.blocks):
            if header:
                lines.append(pad + header.format(*rendered))
            inner = (["    " * (indent + 1) + self.bump] if self.bump and i == 0 else [])
            inner += [line for s in body for line in s.render(indent + 1, oracle)]
            lines += inner or ["    " * (indent + 1) + "pass"]
        return lines


@dataclass
class Program:
    body: List[Stmt]

    def source(self, oracle: bool = False) -> str:
        # (`statistics` for `statistics.mode`; the oracle's namespace has np and math already.)
        lines = ["import statistics", "def f(x):"] + [line for s in self.body for line in s.render(1, oracle)]
        return "\n".join(lines) + "\n"


def leaf(ty: str, text: str) -> Expr:
    return Expr(ty, text.replace("{", "{{").replace("}", "}}"))


FLOAT_CONSTS = ["0.0", "-0.0", "1.0", "-1.0", "0.5", "2.5", "-2.5", "0.1", "3.0", "1e308", "-1e308", "5e-324",
                "2.2250738585072014e-308", "1e-300", "9.223372036854776e18", "-9.223372036854776e18",
                "4503599627370497.0", "np.nan", "np.inf", "-np.inf", "math.pi", "float('nan')", "math.inf", "1e16"]
INT_CONSTS = ["0", "1", "2", "3", "-1", "7", "-7", "10", "63", "64", "2**62", "2**53 + 1",
              "9223372036854775807", "-9223372036854775807", "4611686018427387904", "3037000499", "3037000500"]
UNARY_MATH = ["sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh",
              "atan", "asin", "acos", "fabs", "degrees", "radians", "cbrt", "exp2",
              "asinh", "acosh", "atanh"]
UNARY_NP = ["sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh",
            "arctan", "arcsin", "arccos", "floor", "ceil", "trunc", "fabs", "abs", "degrees", "radians", "cbrt",
            "sign", "rint", "round", "exp2", "arcsinh", "arccosh", "arctanh", "square", "negative"]
BINARY_MATH = ["hypot", "atan2", "copysign", "fmod", "pow"]
BINARY_NP = ["hypot", "arctan2", "copysign", "fmod", "power", "maximum", "minimum", "fmax", "fmin"]
REDUCE_NP = ["sum", "mean", "var", "std", "min", "max", "amin", "amax", "median", "prod", "ptp", "average",
             "nansum", "nanmean", "nanvar", "nanstd", "nanmin", "nanmax", "nanmedian"]
REDUCE_METHOD = ["sum", "mean", "var", "std", "min", "max", "prod"]
NP_COMPARE = ["greater", "greater_equal", "less", "less_equal", "equal", "not_equal"]


@dataclass(frozen=True)
class Profile:
    """Which corners of the language the generator visits. ``FULL`` is everything (CI and long
    runs: findings that fall under a documented deviation are labelled, compare.documented);
    ``QUIET`` leaves out the areas where ndjit raises by design or deviates as documented, for runs
    that hunt only the unexplained."""

    big_ints: bool = True  # ints past 64 bits: constants near 2**63, shifts, int ** int, int()/round() of huge floats
    dot: bool = True  # np.dot (BLAS order)
    float_pow: bool = True  # ``**`` on floats: complex results, overflow, 0.0 ** -1 (issue 12, item 4)
    round_digits: bool = True  # round(v, k): Python's correctly rounded result (issue 12, item 4)
    builtin_sum: bool = True  # builtin sum() adds left to right (issue 12, item 2)
    # NumPy ints (np.argmin ...) beside Python ints: each divides, shifts and overflows as its own
    # kind, also through variables and builtin min/max that hold either.
    numpy_ints: bool = True
    # List comprehensions and generator expressions (sum/min/max/any/all/sorted of them).
    comprehensions: bool = True


FULL = Profile()
# Without np.dot (BLAS order), complex float powers (ValueError) and ints near 2**63 (OverflowError).
QUIET = Profile(dot=False, float_pow=False, big_ints=False)
SMALL_INTS = ["0", "1", "2", "3", "-1", "7", "-7", "10", "63", "64", "1000003", "-65536"]


class Generator:
    """Draws programs; ``rng`` makes them reproducible from a seed."""

    def __init__(self, rng: random.Random, profile: Profile = FULL):
        self.r = rng
        self.profile = profile
        self.vars: dict = {}  # name -> type, the variables in scope
        self.loop_depth = 0
        self.counter = 0

    # --- expressions ------------------------------------------------------------------------
    def expr(self, ty: str, depth: int) -> Expr:
        if depth <= 0 or self.r.random() < 0.25:
            return self.atom(ty)
        return getattr(self, "gen_" + ty)(depth - 1)

    def atom(self, ty: str) -> Expr:
        names = [n for n, t in self.vars.items() if t == ty]
        if names and self.r.random() < 0.6:
            return leaf(ty, self.r.choice(names))
        if ty == "f":
            if self.r.random() < 0.6:
                return leaf("f", f"x[{self.index()}]")
            text = self.r.choice(FLOAT_CONSTS)
            # Parenthesised, so that ``(-2.5) ** 0.5`` means what the tree says.
            return leaf("f", f"({text})" if text.startswith("-") else text)
        if ty == "i":
            consts = INT_CONSTS if self.profile.big_ints else SMALL_INTS
            text = self.r.choice(consts + ["len(x)", "x.size", "x.shape[0]", "len(x) // 2"])
            # Parenthesised like the floats: ``(-1) ** 40`` is 1, ``-1 ** 40`` is -1.
            wrap = " " in text or "*" in text or text.startswith("-")
            return leaf("i", f"({text})" if wrap else text)
        if ty == "b":
            return leaf("b", self.r.choice(["True", "False", "x[0] > 0.5", "len(x) > 4"]))
        return leaf("a", "x")

    def index(self) -> str:
        return self.r.choice(["0", "1", "-1", "2", "-2", "len(x) // 2", "len(x) - 1", "4", "-9"])

    def pick(self, *options):
        """Chooses one of ``(weight, make)`` pairs and calls it."""
        options = [o for o in options if o[0] > 0]
        total = sum(w for w, _ in options)
        at = self.r.random() * total
        for w, make in options:
            at -= w
            if at <= 0:
                return make()
        return options[-1][1]()

    def gen_f(self, d: int) -> Expr:
        e, p = self.expr, self.profile
        ops = ["+", "-", "*", "/", "//", "%"]
        return self.pick(
            (6, lambda: Expr("f", "({0} " + self.r.choice(ops) + " {1})", [e("f", d), e(self.r.choice("ffi"), d)])),
            (1, lambda: Expr("f", "({0} " + self.r.choice(ops) + " {1})", [e("i", d), e("f", d)])),
            (2 * p.float_pow, lambda: Expr("f", "({0} ** {1})", [e("f", d), self.exponent()], ofmt=POW_ORACLE)),
            (1, lambda: Expr("f", "(-{0})", [e("f", d)])),
            (2, lambda: Expr("f", "abs({0})", [e("f", d)])),
            (3, lambda: Expr("f", f"math.{self.r.choice(UNARY_MATH)}({{0}})", [e("f", d)])),
            (3, lambda: Expr("f", f"np.{self.r.choice(UNARY_NP)}({{0}})", [e("f", d)])),
            (1, lambda: Expr("f", f"math.{self.r.choice(BINARY_MATH if p.float_pow else BINARY_MATH[:-1])}({{0}}, {{1}})",
                             [e("f", d), e("f", d)])),
            (1, lambda: Expr("f", f"np.{self.r.choice(BINARY_NP)}({{0}}, {{1}})", [e("f", d), e("f", d)])),
            (5, lambda: self.reduction(d)),
            (2, lambda: Expr("f", self.r.choice(["min({0}, {1})", "max({0}, {1})"]), [e("f", d), e("f", d)])),
            (1, lambda: Expr("f", "float({0})", [e(self.r.choice("ib"), d)])),
            (p.round_digits, lambda: Expr("f", f"round({{0}}, {self.r.choice(['0', '1', '2', '-1'])})", [e("f", d)])),
            (2, lambda: Expr("f", "({0} if {1} else {2})", [e("f", d), e("b", d), e("f", d)])),
            (1, lambda: Expr("f", f"np.percentile({{0}}, {self.r.choice(['0', '25', '50', '90', '100', '33.3'])})",
                             [e("a", d)])),
            (1, lambda: Expr("f", f"np.quantile({{0}}, {self.r.choice(['0.0', '0.5', '0.75', '1.0'])})",
                             [e("a", d)])),
            (1, lambda: Expr("f", "{0}[{1}]", [e("a", d), leaf("i", self.index())])),
            (2 * p.comprehensions, lambda: self.generator_reduction(d)),
            (2 if p.comprehensions and self.lists() else 0, self.list_use),
            (p.comprehensions, lambda: Expr("f", f"sorted({{0}}{self.r.choice(['', ', reverse=True'])})[{self.index()}]",
                                            [e("a", d)])),
            # The majority of an array's values (ties to the first seen; -0.0 and 0.0 one value).
            (1, lambda: Expr("f", "float(statistics.mode(np.round({0})))", [e("a", d)])),
        )

    def comprehension(self, d: int, elt_ty: str) -> tuple:
        """``elt for v in <array or range> [if cond]``: the element and the condition see ``v``
        (a float of the array, or an int of the range); it is out of scope again afterwards."""
        name = self.fresh("c")
        over_range = self.r.random() < 0.3
        source = leaf("a", "range(len(x))") if over_range else self.expr("a", d)
        saved = dict(self.vars)
        self.vars[name] = "i" if over_range else "f"
        elt = self.expr(elt_ty, d)
        cond = self.expr("b", d) if self.r.random() < 0.5 else None
        self.vars = saved
        text = "{0} for " + name + " in {1}" + (" if {2}" if cond is not None else "")
        return text, [elt, source] + ([cond] if cond is not None else [])

    def generator_reduction(self, d: int) -> Expr:
        fn = self.r.choice(["sum", "min", "max"])
        text, parts = self.comprehension(d, "f")
        # Elements of one kind (NumPy scalars) mostly, as in real code: a sum of Python floats
        # and a min/max of mixed kinds are refused by design (see the README).
        if self.r.random() < 0.8:
            text = "np.float64(" + text.replace(" for ", ") for ", 1)
        return Expr("f", f"{fn}({text})", parts)

    def exponent(self) -> Expr:
        return self.pick((3, lambda: leaf("i", self.r.choice(["0", "1", "2", "3", "-1", "-2", "5"]))),
                         (2, lambda: leaf("f", self.r.choice(["0.5", "2.0", "-0.5", "1.5", "3.0", "0.0"]))),
                         (1, lambda: self.expr("f", 1)))

    def reduction(self, d: int) -> Expr:
        a = self.expr("a", d)
        return self.pick(
            (4, lambda: Expr("f", f"np.{self.r.choice(REDUCE_NP)}({{0}})", [a])),
            (2, lambda: Expr("f", f"{{0}}.{self.r.choice(REDUCE_METHOD)}()", [a])),
            (1, lambda: Expr("f", f"np.{self.r.choice(['var', 'std', 'nanvar', 'nanstd'])}({{0}}, ddof=1)", [a])),
            (2, lambda: Expr("f", f"{self.r.choice(['sum', 'min', 'max'] if self.profile.builtin_sum else ['min', 'max'])}({{0}})", [a])),
            (1 if self.profile.dot else 0, lambda: Expr("f", "np.dot({0}, {1})", [a, self.expr("a", 0)])),
        )

    def gen_i(self, d: int) -> Expr:
        e = self.expr
        big = 1 if self.profile.big_ints else 0
        # Without big ints, casts see a bounded operand (NaN and inf still reach them).
        cast = "{0}" if big else "min(max({0}, -1e15), 1e15)"
        return self.pick(
            (6, lambda: Expr("i", "({0} " + self.r.choice(["+", "-", "*", "//", "%"]) + " {1})", [e("i", d), e("i", d)])),
            (big, lambda: Expr("i", "({0} ** {1})", [e("i", d), leaf("i", self.r.choice(["0", "1", "2", "3", "40", "63"]))])),
            (big, lambda: Expr("i", "({0} " + self.r.choice(["<<", ">>"]) + " {1})",
                             [e("i", d), leaf("i", self.r.choice(["0", "1", "3", "62", "63", "64", "70", "-1"]))])),
            (1, lambda: Expr("i", "({0} " + self.r.choice(["&", "|", "^"]) + " {1})", [e("i", d), e("i", d)])),
            (1, lambda: Expr("i", self.r.choice(["(-{0})", "abs({0})", "(~{0})"]), [e("i", d)])),
            (3, lambda: Expr("i", f"int({cast})", [e("f", d)])),
            # math.floor/ceil/trunc return Python ints.
            (1, lambda: Expr("i", f"math.{self.r.choice(['floor', 'ceil', 'trunc'])}({cast})", [e("f", d)])),
            (2, lambda: Expr("i", f"round({cast})", [e("f", d)])),
            (1, lambda: Expr("i", self.r.choice(["min({0}, {1})", "max({0}, {1})"]), [e("i", d), e("i", d)])),
            (2, lambda: Expr("i", self.r.choice(["len({0})", "{0}.size"] + (
                ["np.count_nonzero({0})", "np.argmin({0})", "np.argmax({0})"] if self.profile.numpy_ints else [])),
                [e("a", d)])),
            (1, lambda: Expr("i", "({0} if {1} else {2})", [e("i", d), e("b", d), e("i", d)])),
            (1, lambda: Expr("i", "int({0})", [e("b", d)])),
        )

    def gen_b(self, d: int) -> Expr:
        e = self.expr
        cmp = lambda: self.r.choice(["<", "<=", ">", ">=", "==", "!="])  # noqa: E731
        return self.pick(
            (5, lambda: Expr("b", "({0} " + cmp() + " {1})", [e("f", d), e(self.r.choice("ffi"), d)])),
            (2, lambda: Expr("b", "({0} " + cmp() + " {1})", [e("i", d), e("i", d)])),
            (1, lambda: Expr("b", "({0} " + cmp() + " {1} " + cmp() + " {2})", [e("f", d), e("f", d), e("f", d)])),
            (2, lambda: Expr("b", "({0} " + self.r.choice(["and", "or"]) + " {1})", [e("b", d), e("b", d)])),
            (1, lambda: Expr("b", "(not {0})", [e("b", d)])),
            (2, lambda: Expr("b", f"{self.r.choice(['math', 'np'])}.{self.r.choice(['isnan', 'isinf', 'isfinite'])}({{0}})",
                             [e("f", d)])),
            (1, lambda: Expr("b", f"{self.r.choice(['np.any', 'np.all', 'any', 'all'])}({{0}} > {{1}})",
                             [e("a", d), e("f", d)])),
            (1, lambda: Expr("b", "bool({0})", [e(self.r.choice("fi"), d)])),
            # NumPy's comparison functions: NumPy bools, ints compared with floats as floats.
            (1, lambda: Expr("b", f"bool(np.{self.r.choice(NP_COMPARE)}({{0}}, {{1}}))",
                             [e(self.r.choice("fi"), d), e(self.r.choice("fi"), d)])),
            (self.profile.comprehensions, lambda: self.any_all(d)),
        )

    def any_all(self, d: int) -> Expr:
        text, parts = self.comprehension(d, "b")
        return Expr("b", f"{self.r.choice(['any', 'all'])}({text})", parts)

    def gen_a(self, d: int) -> Expr:
        e = self.expr
        cmp = lambda: self.r.choice(["<", ">", "<=", ">=", "==", "!="])  # noqa: E731
        return self.pick(
            (3, lambda: Expr("a", "{0}[{0} " + cmp() + " {1}]", [e("a", 0), e("f", d)])),
            (2, lambda: Expr("a", "{0}[" + self.r.choice(["np.isfinite({0})", "~np.isnan({0})", "np.isnan({0})"]) + "]",
                             [e("a", 0)])),
            (1, lambda: Expr("a", "{0}[({0} > {1}) & ({0} < {2})]", [e("a", 0), e("f", d), e("f", d)])),
            (3, lambda: Expr("a", "({0} " + self.r.choice(["+", "-", "*", "/"]) + " {1})", [e("a", d), e("f", d)])),
            (self.profile.float_pow, lambda: Expr("a", "({0} ** 2)", [e("a", d)])),
            (2, lambda: Expr("a", f"np.{self.r.choice(['abs', 'sqrt', 'exp', 'floor', 'sign', 'negative'])}({{0}})",
                             [e("a", d)])),
            (2, lambda: Expr("a", self.r.choice(["np.sort({0})", "np.flip({0})", "np.diff({0})", "{0}[1:]", "{0}[:3]",
                                                 "{0}[::2]", "{0}[::-1]", "np.delete({0}, 0)"]), [e("a", d)])),
            (1, lambda: Expr("a", "np.clip({0}, {1}, {2})", [e("a", d), e("f", d), e("f", d)])),
            # A list display handed to a NumPy function is the array NumPy makes of it.
            (1, lambda: Expr("a", f"np.{self.r.choice(['maximum', 'minimum', 'add', 'multiply', 'fmax'])}([{{0}}, {{1}}], {{2}})",
                             [e("f", d), e("f", d), e("f", d)])),
            (1, lambda: Expr("a", "{0}[np." + self.r.choice(NP_COMPARE) + "({0}, {1})]", [e("a", 0), e("f", d)])),
            (1, lambda: Expr("a", "np.where({0} > {1}, {0}, {2})", [e("a", 0), e("f", d), e("f", d)])),
            (1, lambda: Expr("a", "np.concatenate(({0}, {1}))", [e("a", d), e("a", 0)])),
            (self.profile.comprehensions, lambda: self.list_comprehension(d)),
        )

    def list_comprehension(self, d: int) -> Expr:
        text, parts = self.comprehension(d, "f")
        return Expr("a", "np.array([" + text + "], dtype=float)", parts)

    # --- statements ---------------------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def block(self, n: int, depth: int) -> List[Stmt]:
        saved = dict(self.vars)
        body = [self.stmt(depth) for _ in range(n)]
        self.vars = saved  # names first bound inside a block may be unbound after it
        return body

    def stmt(self, depth: int) -> Stmt:
        r = self.r
        options = [(5, self.assign), (2, self.augassign)]
        if depth > 0:
            options += [(3, lambda: self.if_stmt(depth)), (2, lambda: self.for_stmt(depth)),
                        (1, lambda: self.while_stmt(depth))]
        if self.loop_depth:
            options += [(1, lambda: Stmt("if {0}: " + r.choice(["break", "continue"]), [self.expr("b", 2)]))]
        options += [(1, lambda: Stmt("if {0}: return {1}", [self.expr("b", 2), self.expr(r.choice("fib"), 2)]))]
        # The window sorted in place: every later read of x sees it sorted (NumPy's order).
        options += [(1, lambda: Stmt("x.sort()", []))]
        if self.profile.comprehensions:
            options += [(1, self.new_list), (3 if self.lists() else 0, self.append),
                        (2 if self.lists() else 0, self.change_list)]
        return self.pick(*options)

    def lists(self) -> List[str]:
        return [n for n, t in self.vars.items() if t == "l"]

    def new_list(self) -> Stmt:
        name = self.fresh("l")
        self.vars[name] = "l"
        return Stmt(name + " = []", [])

    def append(self) -> Stmt:
        # NumPy scalars mostly (a list of mixed kinds is refused where the kind matters).
        fmt = ".append(np.float64({0}))" if self.r.random() < 0.8 else ".append({0})"
        return Stmt(self.r.choice(self.lists()) + fmt, [self.expr("f", 2)])

    def change_list(self) -> Stmt:
        """A list method that changes the list in place, its items NumPy scalars as `append`'s."""
        name = self.r.choice(self.lists())
        floats = [n for n, t in self.vars.items() if t == "f" and not n.startswith("_")]
        forms = [
            (name + ".sort()", []), (name + ".sort(reverse=True)", []), (name + ".reverse()", []),
            (name + ".extend(x[:{0}])", [self.expr("i", 1)]),
            (name + ".extend(np.float64(v) * 0.5 for v in x if v > {0})", [self.expr("f", 1)]),
            (name + ".insert({0}, np.float64({1}))", [self.expr("i", 1), self.expr("f", 2)]),
            ("if " + name + ": " + name + ".pop()", []),
            (name + ".pop({0})", [self.expr("i", 1)]),
            ("if " + name + ": " + name + ".remove(" + name + "[{0} % len(" + name + ")])", [self.expr("i", 1)]),
            (name + ".remove(np.float64({0}))", [self.expr("f", 1)]),
            (name + ".clear()", []),
        ]
        if floats:
            forms.append(("if " + name + ": " + self.r.choice(floats) + " = " + name + ".pop(0)", []))
        fmt, children = self.r.choice(forms)
        return Stmt(fmt, children)

    def list_use(self) -> Expr:
        """A float from a list built by ``append`` (which may still be empty)."""
        name = leaf("l", self.r.choice(self.lists()))
        fmt = self.r.choice(["({0}[-1] if {0} else 0.5)", "float(len({0}))", "(np.mean({0}) if len({0}) else 0.0)",
                             "np.sum(np.array({0}, dtype=float))", "(max({0}) if {0} else -1.0)",
                             "(sorted({0})[len({0}) // 2] if {0} else 0.0)"])
        return Expr("f", fmt, [name])

    def assign(self) -> Stmt:
        ty = self.r.choice("ffffiib")
        names = [n for n, t in self.vars.items() if t == ty and not n.startswith("_")]
        value = self.expr(ty, 3)
        if names and self.r.random() < 0.5:
            return Stmt(self.r.choice(names) + " = {0}", [value])
        name = self.fresh("v")
        self.vars[name] = ty
        return Stmt(name + " = {0}", [value])

    def augassign(self) -> Stmt:
        names = [n for n, t in self.vars.items() if t in "fi" and not n.startswith("_")]
        if not names:
            return self.assign()
        name = self.r.choice(names)
        ty = self.vars[name]
        op = self.r.choice(["+=", "-=", "*=", "//=", "%="] + (["/="] if ty == "f" else []))
        # An int stays an int: Python's int /= would make it a float.
        return Stmt(f"{name} {op} {{0}}", [self.expr(ty, 2)])

    def if_stmt(self, depth: int) -> Stmt:
        blocks = [("", self.block(self.r.randint(1, 3), depth - 1))]
        head_cond = self.expr("b", 2)
        exprs = [head_cond]
        for _ in range(self.r.randint(0, 2)):
            exprs.append(self.expr("b", 2))
            blocks.append((f"elif {{{len(exprs) - 1}}}:", self.block(self.r.randint(1, 2), depth - 1)))
        if self.r.random() < 0.5:
            blocks.append(("else:", self.block(self.r.randint(1, 2), depth - 1)))
        return Stmt("if {0}:", exprs, blocks)

    def for_stmt(self, depth: int) -> Stmt:
        r = self.r
        saved = dict(self.vars)
        kind = r.choice(["x", "range", "range2", "enumerate", "masked", "zip"])
        v, i = self.fresh("_e"), self.fresh("_i")
        if kind in ("x", "masked"):
            head, exprs = f"for {v} in {{0}}:", [self.expr("a", 1) if kind == "masked" else leaf("a", "x")]
            self.vars[v] = "f"
        elif kind == "range":
            head, exprs = f"for {i} in range({r.choice(['len(x)', '3', '0', 'len(x) // 2', '-2'])}):", []
            self.vars[i] = "i"
        elif kind == "range2":
            head, exprs = f"for {i} in range({r.choice(['1', '-3', '5'])}, {r.choice(['len(x)', '4', '-1'])}, {r.choice(['1', '2', '-1', '3'])}):", []
            self.vars[i] = "i"
        elif kind == "enumerate":
            head, exprs = f"for {i}, {v} in enumerate(x):", []
            self.vars[i], self.vars[v] = "i", "f"
        else:
            head, exprs = f"for {v}, _z{v} in zip(x, np.flip(x)):", []
            self.vars[v] = self.vars["_z" + v] = "f"
        self.loop_depth += 1
        body = self.block(r.randint(1, 3), depth - 1)
        self.loop_depth -= 1
        self.vars = saved
        blocks = [("", body)]
        if r.random() < 0.2:
            blocks.append(("else:", self.block(1, 0)))
        return Stmt(head, exprs, blocks)

    def while_stmt(self, depth: int) -> Stmt:
        c = self.fresh("_w")
        bound = self.r.choice(["3", "len(x)", "10"])
        cond = self.expr("b", 2)
        self.loop_depth += 1
        body = self.block(self.r.randint(1, 3), depth - 1)
        self.loop_depth -= 1
        return Stmt(f"while {c} < {bound} and {{0}}:", [cond], [("", body)], pre=f"{c} = 0", bump=f"{c} += 1")

    def program(self) -> Program:
        self.vars, self.loop_depth, self.counter = {}, 0, 0
        body = [self.stmt(2) for _ in range(self.r.randint(0, 4))]
        body.append(Stmt("return {0}", [self.expr(self.r.choice("ffffib"), 3)]))
        return Program(body)


# --- inputs ---------------------------------------------------------------------------------
SPECIAL = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
           1.7976931348623157e308, -1.7976931348623157e308, 1e300, 1e-300, 0.5, 1.0, -1.0, 2.5, 3.0, 0.1,
           9.223372036854776e18, -9.223372036854776e18, 9.223372036854775e18, 4503599627370497.0, 1e16, 2.0 ** 53]
SIZES = [1, 2, 3, 4, 5, 8, 9, 9, 9, 16, 25]


def window(rng: random.Random, n: int) -> List[float]:
    """A window of ``n`` values: ordinary ones, small integers (ties for round/median) and, in
    about half the windows, awkward ones (NaN, ±inf, ±0, subnormals, huge, near 2**63)."""
    special = rng.random() < 0.5
    out = []
    for _ in range(n):
        u = rng.random()
        if special and u < 0.35:
            out.append(rng.choice(SPECIAL))
        elif u < 0.6:
            out.append(float(rng.randint(-3, 6)) / rng.choice([1, 2]))
        else:
            out.append(round(rng.gauss(0.5, 2.0), rng.choice([2, 17])))
    return out
