//! The names a filter can call: modules, functions and methods, resolved from the source's
//! spelling (aliases included) to one typed [`Builtin`] each, so that lowering matches on
//! variants, never on text. Each function's spelling is written once, in [`Func`]'s table.

use std::fmt;

/// The namespace a function is called through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    /// `np.*` (or `numpy.*`): NumPy's functions, on arrays and NumPy scalars.
    Np,
    /// `math.*`: CPython's math module, on Python floats.
    Math,
    /// Python's builtins (`len`, `min`, `range` ...).
    Builtin,
    /// Methods of arrays and scalars that are not NumPy functions (`x.astype(int)` ...).
    Method,
    /// `np.linalg.*` (reached as `np.linalg`).
    Linalg,
    /// `statistics.*`: Python's statistics module.
    Statistics,
    /// `collections.*`: its `Counter`.
    Collections,
}

impl Module {
    /// How a call's display name starts (`np.sum`, `math.exp`, `len`, `method.astype`).
    fn prefix(self) -> &'static str {
        match self {
            Module::Np => "np.",
            Module::Math => "math.",
            Module::Builtin => "",
            Module::Method => "method.",
            Module::Linalg => "np.linalg.",
            Module::Statistics => "statistics.",
            Module::Collections => "collections.",
        }
    }
}

/// Declares [`Func`] with each variant's spelling, and the table that resolves spellings.
macro_rules! funcs {
    ($($variant:ident = $name:literal,)*) => {
        /// A function's identity, whatever module it is called through (`np.exp` and `math.exp`
        /// are both [`Func::Exp`]; the [`Module`] tells their semantics apart).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Func {
            $($variant,)*
        }

        impl Func {
            const ALL: &[Func] = &[$(Func::$variant,)*];

            /// The canonical spelling, e.g. `"arcsin"` (not the alias `"asin"`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Func::$variant => $name,)*
                }
            }
        }
    };
}

funcs! {
    // element-wise math (NumPy and math)
    Sqrt = "sqrt", Exp = "exp", Expm1 = "expm1", Log = "log", Log2 = "log2", Log10 = "log10",
    Log1p = "log1p", Sin = "sin", Cos = "cos", Tan = "tan", Sinh = "sinh", Cosh = "cosh",
    Tanh = "tanh", Cbrt = "cbrt", Exp2 = "exp2", Floor = "floor", Ceil = "ceil", Trunc = "trunc",
    IsNan = "isnan", IsInf = "isinf", IsFinite = "isfinite", CopySign = "copysign", Fmod = "fmod",
    Hypot = "hypot", Degrees = "degrees", Radians = "radians", Fabs = "fabs", Arcsin = "arcsin",
    Arccos = "arccos", Arctan = "arctan", Arcsinh = "arcsinh", Arccosh = "arccosh",
    Arctanh = "arctanh", Arctan2 = "arctan2", Power = "power",
    // NumPy element-wise and array functions
    Abs = "abs", Round = "round", Sign = "sign", Square = "square", Negative = "negative",
    Reciprocal = "reciprocal", Rint = "rint", Minimum = "minimum", Maximum = "maximum", Fmin = "fmin",
    Fmax = "fmax", Where = "where", Clip = "clip", LogicalAnd = "logical_and",
    LogicalOr = "logical_or", LogicalNot = "logical_not", LogicalXor = "logical_xor", Add = "add",
    Subtract = "subtract", Multiply = "multiply", Divide = "divide", Remainder = "remainder",
    FloorDivide = "floor_divide", Equal = "equal", NotEqual = "not_equal", Less = "less",
    LessEqual = "less_equal", Greater = "greater", GreaterEqual = "greater_equal", Delete = "delete", Concatenate = "concatenate", Sort = "sort",
    Dot = "dot", Average = "average", Diff = "diff", Flip = "flip", Bincount = "bincount",
    Histogram = "histogram", Reshape = "reshape", Array = "array", Ravel = "ravel",
    CopyOf = "copy", AsArray = "asarray", Shape = "shape", Ndim = "ndim",
    Float64 = "float64",
    Int64 = "int64", BoolScalar = "bool_",
    // NumPy array functions lowered in `numpy/`
    Unique = "unique", Nonzero = "nonzero", Argwhere = "argwhere", Flatnonzero = "flatnonzero",
    Cumsum = "cumsum", Cumprod = "cumprod", Isin = "isin", Roll = "roll", RConcat = "r_",
    Norm = "norm", Linspace = "linspace", Zeros = "zeros", Ones = "ones", Full = "full",
    ZerosLike = "zeros_like", OnesLike = "ones_like", FullLike = "full_like", Arange = "arange",
    Isclose = "isclose", Allclose = "allclose", NanToNum = "nan_to_num",
    // NumPy reductions
    Sum = "sum", Nansum = "nansum", Prod = "prod", Nanprod = "nanprod", Mean = "mean",
    Nanmean = "nanmean", Var = "var", Nanvar = "nanvar", Std = "std", Nanstd = "nanstd",
    Min = "min", Max = "max", Nanmin = "nanmin", Nanmax = "nanmax", Ptp = "ptp",
    Median = "median", MedianLow = "median_low", MedianHigh = "median_high", Mode = "mode", Nanmedian = "nanmedian", Percentile = "percentile",
    Nanpercentile = "nanpercentile", Quantile = "quantile", Nanquantile = "nanquantile",
    Any = "any", All = "all", CountNonzero = "count_nonzero", Argmin = "argmin",
    Argmax = "argmax", Nanargmin = "nanargmin", Nanargmax = "nanargmax", Argsort = "argsort",
    Size = "size",
    // Python builtins (besides abs, min, max, sum, any, all and round above)
    Len = "len", Float = "float", Int = "int", Bool = "bool", Pow = "pow", Range = "range",
    Enumerate = "enumerate", Zip = "zip", Sorted = "sorted", List = "list", TupleOf = "tuple",
    Divmod = "divmod", Set = "set", Frozenset = "frozenset",
    // methods that are not NumPy functions (`index` and `count` are a list's and a tuple's)
    Astype = "astype", Item = "item", IsInteger = "is_integer", SeqIndex = "index",
    SeqCount = "count", Tolist = "tolist",
    // `collections.Counter` and its method
    Counter = "Counter", MostCommon = "most_common",
}

impl fmt::Display for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Func {
    /// The function spelled `name` canonically, if any.
    fn named(name: &str) -> Option<Func> {
        Func::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Whether `module.<canonical name>` is a function of the language.
    pub(crate) fn is_in(self, module: Module) -> bool {
        use Func::*;
        let builtin = matches!(
            self,
            Len | Abs
                | Min
                | Max
                | Sum
                | Any
                | All
                | Round
                | Float
                | Int
                | Bool
                | Pow
                | Range
                | Enumerate
                | Zip
                | Sorted
                | List
                | TupleOf
                | Divmod
                | Set
                | Frozenset
        );
        let method_only = matches!(
            self,
            Astype | Item | IsInteger | SeqIndex | SeqCount | Tolist | MostCommon
        );
        let statistics_only = matches!(self, MedianLow | MedianHigh | Mode);
        match module {
            // Python's builtins are not NumPy's, except those NumPy also has.
            Module::Np => {
                let shared = matches!(self, Abs | Min | Max | Sum | Any | All | Round | Divmod);
                !method_only
                    && !statistics_only
                    && (!builtin || shared)
                    && !matches!(self, Norm | Counter)
            }
            Module::Statistics => matches!(self, Median | MedianLow | MedianHigh | Mode),
            Module::Collections => self == Counter,
            Module::Linalg => self == Norm,
            Module::Math => {
                matches!(
                    self,
                    Sqrt | Exp
                        | Expm1
                        | Log
                        | Log2
                        | Log10
                        | Log1p
                        | Sin
                        | Cos
                        | Tan
                        | Sinh
                        | Cosh
                        | Tanh
                        | Cbrt
                        | Exp2
                        | Floor
                        | Ceil
                        | Trunc
                        | IsNan
                        | IsInf
                        | IsFinite
                        | CopySign
                        | Fmod
                        | Hypot
                        | Degrees
                        | Radians
                        | Fabs
                        | Arcsin
                        | Arccos
                        | Arctan
                        | Arcsinh
                        | Arccosh
                        | Arctanh
                        | Arctan2
                )
            }
            Module::Builtin => builtin,
            Module::Method => method_only || self == Reshape,
        }
    }
}

/// A function as a call resolves it: its module and identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Builtin {
    pub module: Module,
    pub func: Func,
}

impl fmt::Display for Builtin {
    /// The name calls are reported under (`np.sum`, `math.exp`, `len`, `method.astype`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Func::*;
        // Python's math spells the inverse functions and the power its own way.
        let math_name = match self.func {
            Arcsin => "asin",
            Arccos => "acos",
            Arctan => "atan",
            Arcsinh => "asinh",
            Arccosh => "acosh",
            Arctanh => "atanh",
            Arctan2 => "atan2",
            Power => "pow",
            _ => self.func.name(),
        };
        match self.module {
            Module::Math => write!(f, "math.{math_name}"),
            _ => write!(f, "{}{}", self.module.prefix(), self.func),
        }
    }
}

/// `module.name`, aliases resolved (`np.amax` is `np.max`, `math.asin` is `np.arcsin`'s function).
pub(crate) fn resolve(module: Module, name: &str) -> Option<Builtin> {
    use Func::*;
    use Module::{Math, Np};
    let func = match (module, name) {
        (Np | Math, "asin") => Arcsin,
        (Np | Math, "acos") => Arccos,
        (Np | Math, "atan") => Arctan,
        (Np | Math, "asinh") => Arcsinh,
        (Np | Math, "acosh") => Arccosh,
        (Np | Math, "atanh") => Arctanh,
        (Np | Math, "atan2") => Arctan2,
        (Np | Math, "pow") => Power,
        (Np, "rad2deg") => Degrees,
        (Np, "deg2rad") => Radians,
        (Np, "absolute") => Abs,
        (Np, "around") => Round,
        (Np, "fix") => Trunc,
        (Np, "true_divide") => Divide,
        (Np, "mod") => Remainder,
        // `np.array` copies, `np.asarray` is its argument where that is an array (a view stays
        // one: `strided_dots.rs`); the lowering treats them alike.
        (Np, "asanyarray") => AsArray,
        // Only the 64-bit types: float32 rounds and int32 or uint8 wrap at their own widths,
        // which ndjit does not model, so those are refused (unknown names) rather than widened.
        (Np, "double" | "float_") => Float64,
        (Np, "intp" | "int_") => Int64,
        (Np, "amin") => Min,
        (Np, "amax") => Max,
        _ => Func::named(name).filter(|f| f.is_in(module))?,
    };
    Some(Builtin { module, func })
}

/// `x.<name>(...)`: the function a method of arrays and scalars calls, its receiver first.
pub(crate) fn method(name: &str) -> Option<Builtin> {
    use Func::*;
    let np = |func| {
        Some(Builtin {
            module: Module::Np,
            func,
        })
    };
    match name {
        "sum" => np(Sum),
        "mean" => np(Mean),
        "var" => np(Var),
        "std" => np(Std),
        "min" => np(Min),
        "max" => np(Max),
        "prod" => np(Prod),
        "any" => np(Any),
        "all" => np(All),
        "argmin" => np(Argmin),
        "argmax" => np(Argmax),
        "argsort" => np(Argsort),
        "round" => np(Round),
        // The method takes its bounds otherwise than `np.clip` (`ufuncs::ClipForm`).
        "clip" => Some(Builtin {
            module: Module::Method,
            func: Clip,
        }),
        // A copy keeps the shape; flatten and ravel make it 1-D.
        "copy" => np(Array),
        "flatten" | "ravel" => np(Ravel),
        "cumsum" => np(Cumsum),
        "cumprod" => np(Cumprod),
        "nonzero" => np(Nonzero),
        _ => resolve(Module::Method, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_are_unique_and_resolve_to_themselves() {
        for &f in Func::ALL {
            assert_eq!(Func::named(f.name()), Some(f));
        }
    }

    #[test]
    fn aliases_and_modules() {
        let r = |m, n| resolve(m, n).map(|b| b.to_string());
        assert_eq!(r(Module::Np, "amax").as_deref(), Some("np.max"));
        assert_eq!(r(Module::Math, "pow").as_deref(), Some("math.pow"));
        assert_eq!(r(Module::Math, "asin").as_deref(), Some("math.asin"));
        assert_eq!(r(Module::Math, "power"), None, "Python's math has no power");
        assert_eq!(r(Module::Np, "len"), None);
        assert_eq!(r(Module::Builtin, "sqrt"), None);
        // Python-only builtins are not NumPy functions.
        assert_eq!(r(Module::Np, "tuple"), None);
        assert_eq!(r(Module::Np, "sorted"), None);
        assert_eq!(r(Module::Builtin, "len").as_deref(), Some("len"));
        assert_eq!(
            method("astype").map(|b| b.to_string()).as_deref(),
            Some("method.astype")
        );
        assert_eq!(
            method("ravel").map(|b| b.to_string()).as_deref(),
            Some("np.ravel")
        );
        assert_eq!(
            method("copy").map(|b| b.to_string()).as_deref(),
            Some("np.array")
        );
        assert_eq!(method("median"), None);
        assert_eq!(r(Module::Linalg, "norm").as_deref(), Some("np.linalg.norm"));
        assert_eq!(r(Module::Np, "norm"), None, "norm lives in np.linalg");
        assert_eq!(r(Module::Np, "r_").as_deref(), Some("np.r_"));
        assert_eq!(r(Module::Np, "copy").as_deref(), Some("np.copy"));
        assert_eq!(r(Module::Np, "shape").as_deref(), Some("np.shape"));
        assert_eq!(r(Module::Builtin, "shape"), None);
        assert_eq!(
            r(Module::Statistics, "median_low").as_deref(),
            Some("statistics.median_low")
        );
        assert_eq!(r(Module::Np, "median_low"), None);
        assert_eq!(
            r(Module::Statistics, "mode").as_deref(),
            Some("statistics.mode")
        );
        assert_eq!(r(Module::Np, "mode"), None, "NumPy has no mode");
        assert_eq!(
            r(Module::Statistics, "mean"),
            None,
            "statistics.mean is exact: not np.mean"
        );
    }
}
