//! The methods that change a list in place: `.append(v)`, `.extend(seq)`, `.insert(i, v)`,
//! `.pop()`/`.pop(i)`, `.remove(v)`, `.clear()`, `.sort(reverse=...)` and `.reverse()`.
//!
//! A list the code changes in place is a local stored with a length variable beside its
//! storage, whose length is the capacity; an append that finds it full copies the elements out,
//! makes the storage twice as large and copies them back. Python's lists are shared between
//! names, the lowering's are copied on assignment, so a second name for such a list (or a tuple
//! holding it, or a helper's parameter changed in the helper) is refused where it is made
//! (`Translator::refuse_list_alias`, `rebind::version_params`).
//!
//! The methods are lowered where Python's order of evaluation is the program's order of
//! statements: a call that is a statement of its own, or (`.pop()`, the one that gives a value
//! besides `None`) the whole right side of an assignment, `m = values.pop()`. Inside a larger
//! expression the reads around the call would be computed after its change, so there it is
//! refused. The arguments are computed before the list changes (`v.extend(v)` appends the items
//! it had, as CPython does).

use super::builtins::counted_loop;
use super::expr::{bin, cmp, convert};
use super::lists::{self, Search};
use super::provenance::Prov;
use super::rebind::{self, has_slice};
use super::value::{ElemKind, Value};
use super::{Local, NameTy, Translator};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{Arr, BinOp, CmpOp, Expr, Stmt, Ty, Var};
use crate::syntax::ast;

/// A method that changes a list in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ListMethod {
    Append,
    Extend,
    Insert,
    Pop,
    Remove,
    Clear,
    Sort,
    Reverse,
}

impl ListMethod {
    const ALL: [ListMethod; 8] = [
        ListMethod::Append,
        ListMethod::Extend,
        ListMethod::Insert,
        ListMethod::Pop,
        ListMethod::Remove,
        ListMethod::Clear,
        ListMethod::Sort,
        ListMethod::Reverse,
    ];

    /// The method spelled `attr`, if it is one.
    pub(super) fn named(attr: &str) -> Option<ListMethod> {
        ListMethod::ALL.into_iter().find(|m| m.name() == attr)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            ListMethod::Append => "append",
            ListMethod::Extend => "extend",
            ListMethod::Insert => "insert",
            ListMethod::Pop => "pop",
            ListMethod::Remove => "remove",
            ListMethod::Clear => "clear",
            ListMethod::Sort => "sort",
            ListMethod::Reverse => "reverse",
        }
    }
}

/// A list changed in place as it is stored: the storage (its length is the capacity), the
/// elements' type there, and the list's length.
struct Stored {
    slot: Arr,
    ety: Ty,
    len: Var,
}

/// A call's evaluated arguments.
struct CallArgs {
    pos: Vec<(Value, Span)>,
    kw: Vec<(String, Value, Span)>,
    span: Span,
}

impl Translator<'_> {
    /// The list and the method of `e`, where `e` calls a method that changes a list in place on
    /// a local list this lowering stores as one (see the module docs).
    pub(super) fn changed_list_call<'e>(&self, e: &'e ast::Expr) -> Option<(&'e str, ListMethod)> {
        let (name, method) = rebind::list_method_call(e)?;
        (self.changed_lists.contains(name) && self.locals.contains(name)).then_some((name, method))
    }

    /// `name.method(...)`: changes the list, and gives what the method returns (`None` but for
    /// `.pop()`).
    pub(super) fn list_method(
        &mut self,
        name: &str,
        method: ListMethod,
        call: &ast::Expr,
    ) -> Result<Value> {
        let ast::ExprKind::Call {
            func,
            args,
            keywords,
        } = &call.kind
        else {
            unreachable!("a method call is a call")
        };
        if let ast::ExprKind::Attribute(receiver, _) = &func.kind {
            self.check_bound(name, receiver.span); // the list is read first
        }
        let mut a = CallArgs {
            pos: Vec::new(),
            kw: Vec::new(),
            span: call.span,
        };
        for arg in args {
            self.refuse_generator_over(name, arg)?;
            let v = match &arg.kind {
                ast::ExprKind::Comp(c)
                    if c.kind == ast::CompKind::Generator && method == ListMethod::Extend =>
                {
                    self.list_comprehension(c, arg.span)?
                }
                _ => self.expr(arg)?,
            };
            a.pos.push((v, arg.span));
        }
        for k in keywords {
            a.kw.push((k.name.clone(), self.expr(&k.value)?, k.span));
        }
        if method != ListMethod::Sort {
            if let Some((_, _, ks)) = a.kw.first() {
                let message = format!("list.{}() takes no keyword arguments", method.name());
                return Err(self.err(ErrorKind::Arity, *ks, message));
            }
        }
        match method {
            ListMethod::Append => self.list_append(name, a)?,
            ListMethod::Extend => self.list_extend(name, a)?,
            ListMethod::Insert => self.list_insert(name, a)?,
            ListMethod::Pop => return self.list_pop(name, a),
            ListMethod::Remove => self.list_remove(name, a)?,
            ListMethod::Clear => {
                self.no_arguments(method, &a)?;
                let st = self.stored(name, call.span)?;
                self.emit(Stmt::Assign(st.len, Expr::I64(0)));
            }
            ListMethod::Sort => self.list_sort(name, a)?,
            ListMethod::Reverse => {
                self.no_arguments(method, &a)?;
                let Value::List(arr, kind) = self.current(name, call.span)? else {
                    unreachable!("a changed list reads as a list")
                };
                let back = lists::reversed(self, &arr);
                self.assign_growing_list(name, Value::List(back, kind), call.span)?;
            }
        }
        Ok(Value::None)
    }

    /// Refuses `name.extend(<generator reading name>)`: CPython's generator sees the items the
    /// call adds, and never ends.
    fn refuse_generator_over(&self, name: &str, arg: &ast::Expr) -> Result<()> {
        if let ast::ExprKind::Comp(c) = &arg.kind {
            let mut names = Vec::new();
            crate::syntax::visit::names_in(arg, &mut names);
            if c.kind == ast::CompKind::Generator && names.iter().any(|n| n == name) {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        arg.span,
                        format!(
                            "this generator reads `{}` while the call adds to it: in Python \
                             it sees the items it adds, and never ends",
                            rebind::display(name)
                        ),
                    )
                    .hint("build the new items first: `new = [...]`, then extend with them"));
            }
        }
        Ok(())
    }

    /// Refuses an assignment that would give a list changed in place a second name: `w = v`,
    /// `a, b = v, v`, `t = (v, 1)`, `w = v if c else u`, or such a list made from
    /// anything but a new list (`v = w`, `v = (1.0, 2.0)`, `v = g()`). Python's names then share
    /// one list and see each other's changes; the lowering's assignment copies. (A helper
    /// handed such a list may give it back: see [`Translator::refuse_list_from_helper`].)
    pub(super) fn refuse_list_alias(&self, targets: &[ast::Expr], value: &ast::Expr) -> Result<()> {
        let changed = |n: &str| self.changed_lists.contains(n);
        let mut held = Vec::new();
        held_names(value, &mut held);
        let mut pairs = Vec::new();
        for t in targets {
            target_sources(t, value, &mut pairs);
        }
        let old = pairs.iter().find(|(t, s)| changed(t) && self.old_object(s));
        let chained = targets.len() > 1;
        let (span, name) = match (held.iter().find(|n| changed(n)), old) {
            (Some(n), _) => (value.span, *n),
            (None, Some((t, source))) => (source.span, *t),
            (None, None) => match pairs.iter().find(|(t, _)| chained && changed(t)) {
                Some((t, _)) => (value.span, *t),
                None => return Ok(()),
            },
        };
        let name = rebind::display(name);
        Err(self
            .err(
                ErrorKind::Unsupported,
                span,
                format!(
                    "`{name}` is a list changed in place (`.append`, `.sort` ...), and this \
                     gives it a second name or makes it from another object: in Python both \
                     would be one list and see every change"
                ),
            )
            .hint(format!(
                "make a new list: `{name} = list(values)`, `values[:]` or `[...]`; copy one \
                 before sharing it: `{name}[:]`"
            )))
    }

    /// Whether `e` may give back an object that exists already, which a list changed in place
    /// must not be made from: a name, a tuple (not a list at all), a conditional or `and`/`or`,
    /// an item `t[i]`, an attribute, or what one of the program's functions returns. (A list
    /// display, a comprehension, `list()`, `sorted()`, `.tolist()`, `.copy()` and slices make a
    /// new list; NumPy's functions and numbers are refused as what they are.)
    fn old_object(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            ast::ExprKind::Name(_)
            | ast::ExprKind::Tuple(_)
            | ast::ExprKind::IfExp { .. }
            | ast::ExprKind::BoolOp(..)
            | ast::ExprKind::Attribute(..) => true,
            ast::ExprKind::Subscript(_, index) => !has_slice(index),
            ast::ExprKind::Call { func, .. } => self.calls_helper(func),
            _ => false,
        }
    }

    /// Whether `func` names one of the program's functions (inlined as a helper).
    fn calls_helper(&self, func: &ast::Expr) -> bool {
        matches!(&func.kind, ast::ExprKind::Name(f) if self.helper(f).is_some())
    }

    /// Refuses `w = helper(v)` where the helper may give back a list changed in place, `v`
    /// (or a tuple holding it): a list value, from a call of one of the program's functions
    /// with such a list among its arguments.
    pub(super) fn refuse_list_from_helper(&self, value: &ast::Expr, v: &Value) -> Result<()> {
        let holds_list = match v {
            Value::List(..) => true,
            Value::Tuple(items) => items.iter().any(|i| matches!(i, Value::List(..))),
            _ => false,
        };
        let ast::ExprKind::Call { func, args, .. } = &value.kind else {
            return Ok(());
        };
        let helper = self.calls_helper(func);
        let passes = args.iter().any(|a| {
            let mut names = Vec::new();
            held_names(a, &mut names);
            names.iter().any(|n| self.changed_lists.contains(*n))
        });
        if !(holds_list && helper && passes) {
            return Ok(());
        }
        Err(self
            .err(
                ErrorKind::Unsupported,
                value.span,
                "this helper is handed a list changed in place and gives back a list, which in \
                 Python may be that very list",
            )
            .hint("hand it a copy: `helper(values[:])`"))
    }

    /// The list's storage, its elements' type widened to hold `ty`.
    fn stored_for(&mut self, name: &str, ty: Ty, span: Span) -> Result<Stored> {
        let Local::Array(slot, ety) = self.local_for(name, NameTy::Array(ty), span)? else {
            unreachable!("a list is stored in an array")
        };
        let len = self.list_len[&slot];
        Ok(Stored { slot, ety, len })
    }

    /// Refuses items of type `ty` stored into a list whose storage is of another type `ety` (the
    /// widest type any store gives it). Python's list keeps each item's type, where the storage
    /// would read a bool or an int back as a float or an int: `-v[0]` of `[0, 1]` after a later
    /// `v.append(0.5)` would be `-0.0`, NumPy's array of `[True, False]` an int array.
    pub(super) fn refuse_list_of_types(&mut self, name: &str, ty: Ty, ety: Ty, span: Span) {
        if ty == ety {
            return;
        }
        self.refuse_unsupported(
            span,
            format!(
                "`{}` is given {}s here and {}s elsewhere: a Python list keeps each item's type, \
                 and ndjit's lists have one",
                rebind::display(name),
                ty.name(),
                ety.name()
            ),
            "give its items one type: float(v) for each (or write an int as 0.0)",
        );
    }

    /// The list's storage as it is.
    fn stored(&mut self, name: &str, span: Span) -> Result<Stored> {
        let ty = match self.hints.get(name) {
            Some(NameTy::Array(ty)) => *ty,
            _ => Ty::Bool,
        };
        self.stored_for(name, ty, span)
    }

    /// The list's value: its elements up to its length, with their kind.
    fn current(&mut self, name: &str, span: Span) -> Result<Value> {
        let st = self.stored(name, span)?;
        Ok(self.local_value(name, Local::Array(st.slot, st.ety)))
    }

    fn no_arguments(&self, method: ListMethod, a: &CallArgs) -> Result<()> {
        match a.pos.len() {
            0 => Ok(()),
            n => Err(self.err(
                ErrorKind::Arity,
                a.span,
                format!("list.{}() takes no arguments ({n} given)", method.name()),
            )),
        }
    }

    fn one_argument(&self, method: ListMethod, a: &mut CallArgs) -> Result<(Value, Span)> {
        match a.pos.len() {
            1 => Ok(a.pos.remove(0)),
            n => Err(self.err(
                ErrorKind::Arity,
                a.span,
                format!(
                    "list.{}() takes exactly one argument ({n} given)",
                    method.name()
                ),
            )),
        }
    }

    /// An element to store, of its own type and kind (noted as the list's), converted to the
    /// storage's type and computed now.
    fn new_element(
        &mut self,
        name: &str,
        (v, s): (Value, Span),
        what: &str,
    ) -> Result<(Expr, Stored)> {
        let (e, ty) = self.scalar(v, s, "an element of a list")?;
        let flagged = self.int_flag(&e).is_some();
        self.refuse_int_or_float(flagged, s, what);
        let kind = match self.prov(&e) {
            Prov::Py => ElemKind::Python,
            Prov::Np => ElemKind::NumPy,
            Prov::Dyn(_) => ElemKind::Mixed,
        };
        self.note_list_kind(name, kind);
        let st = self.stored_for(name, ty, s)?;
        self.refuse_list_of_types(name, ty, st.ety, s);
        let e = self.stable(convert(e, ty, st.ety), st.ety);
        Ok((e, st))
    }

    /// Stores `e` (of the storage's type) after the last element, doubling the storage when it
    /// is full.
    fn push(&mut self, st: &Stored, e: Expr, span: Span) -> Result<()> {
        let (slot, ety) = (st.slot, st.ety);
        let n = Expr::Var(st.len);
        let ((), grow) = self.nested(|t| {
            let index = t.temp(Ty::I64);
            let old = super::value::ArrayVal {
                len: n.clone(),
                ty: ety,
                index,
                elem: Expr::Load(slot, Expr::Var(index).boxed()),
            };
            let kept = t.materialize(&old, None);
            let capacity = bin(
                BinOp::Add,
                bin(BinOp::Mul, n.clone(), Expr::I64(2)),
                Expr::I64(8),
            );
            let as_f = convert(capacity.clone(), Ty::I64, Ty::F64);
            super::numpy::creation::limit(t, as_f, span);
            super::builtins::fill_zeros(t, slot, capacity, ety);
            counted_loop(t, n.clone(), |t, k| {
                t.emit(Stmt::Store(slot, k.clone(), kept.at(k)));
                Ok(())
            })
        })?;
        self.emit(Stmt::If(
            cmp(CmpOp::Ge, n.clone(), Expr::Len(slot)),
            grow,
            vec![],
        ));
        self.emit(Stmt::Store(slot, n.clone(), e));
        self.emit(Stmt::Assign(st.len, bin(BinOp::Add, n, Expr::I64(1))));
        Ok(())
    }

    /// Deletes the element at `at` (in `0..n`, `n` the length): the later ones move down one.
    fn delete_at(&mut self, st: &Stored, at: Expr, n: Expr) -> Result<()> {
        let slot = st.slot;
        let after = bin(
            BinOp::Sub,
            bin(BinOp::Sub, n.clone(), at.clone()),
            Expr::I64(1),
        );
        counted_loop(self, after, |t, k| {
            let j = bin(BinOp::Add, at.clone(), k);
            let next = Expr::Load(slot, bin(BinOp::Add, j.clone(), Expr::I64(1)).boxed());
            t.emit(Stmt::Store(slot, j, next));
            Ok(())
        })?;
        self.emit(Stmt::Assign(st.len, bin(BinOp::Sub, n, Expr::I64(1))));
        Ok(())
    }

    /// `name.append(value)`.
    fn list_append(&mut self, name: &str, mut a: CallArgs) -> Result<()> {
        let arg = self.one_argument(ListMethod::Append, &mut a)?;
        let (e, st) = self.new_element(name, arg, "appended to a list")?;
        self.push(&st, e, a.span)
    }

    /// `name.extend(iterable)`: appends the items of a list, a tuple or an array (or a
    /// generator's), each of its own kind.
    fn list_extend(&mut self, name: &str, mut a: CallArgs) -> Result<()> {
        let (v, s) = self.one_argument(ListMethod::Extend, &mut a)?;
        let (arr, kind) = lists::sequence(self, v, s)?;
        self.note_list_kind(name, kind);
        let st = self.stored_for(name, arr.ty, s)?;
        self.refuse_list_of_types(name, arr.ty, st.ety, s);
        // The items as they are before the list grows (`v.extend(v)`).
        let items = self.materialize(&arr, None);
        let n = self.stable(items.len.clone(), Ty::I64);
        counted_loop(self, n, |t, k| {
            let e = t.stable(convert(items.at(k), items.ty, st.ety), st.ety);
            t.push(&st, e, s)
        })
    }

    /// `name.insert(i, value)`: `i` counts from the end where negative, and is clamped to the
    /// list (CPython's rule: `insert(-100, v)` puts `v` first, `insert(100, v)` last).
    fn list_insert(&mut self, name: &str, mut a: CallArgs) -> Result<()> {
        let n = a.pos.len();
        if n != 2 {
            let message = format!("insert expected 2 arguments, got {n}");
            return Err(self.err(ErrorKind::Arity, a.span, message));
        }
        let (iv, is) = a.pos.remove(0);
        let i = self.int(iv, is, "the position of list.insert()")?;
        let i = self.stable(i, Ty::I64);
        let arg = a.pos.remove(0);
        let (e, st) = self.new_element(name, arg, "inserted into a list")?;
        let n = self.stable(Expr::Var(st.len), Ty::I64);
        let at = self.temp(Ty::I64);
        self.emit(Stmt::Assign(at, i.clone()));
        let below = |e: Expr| cmp(CmpOp::Lt, e, Expr::I64(0));
        let from_end = vec![
            Stmt::Assign(at, bin(BinOp::Add, i.clone(), n.clone())),
            Stmt::If(
                below(Expr::Var(at)),
                vec![Stmt::Assign(at, Expr::I64(0))],
                vec![],
            ),
        ];
        self.emit(Stmt::If(below(i), from_end, vec![]));
        self.emit(Stmt::If(
            cmp(CmpOp::Gt, Expr::Var(at), n.clone()),
            vec![Stmt::Assign(at, n.clone())],
            vec![],
        ));
        self.push(&st, e.clone(), a.span)?;
        // The elements from `at` on move up one, the last first.
        let slot = st.slot;
        counted_loop(self, bin(BinOp::Sub, n.clone(), Expr::Var(at)), |t, k| {
            let j = bin(BinOp::Sub, n.clone(), k);
            let before = Expr::Load(slot, bin(BinOp::Sub, j.clone(), Expr::I64(1)).boxed());
            t.emit(Stmt::Store(slot, j, before));
            Ok(())
        })?;
        self.emit(Stmt::Store(slot, Expr::Var(at), e));
        Ok(())
    }

    /// `name.pop()`, `name.pop(i)`: the item, of its own kind, taken out of the list;
    /// `IndexError` as CPython's (an empty list first, then an index outside it).
    fn list_pop(&mut self, name: &str, mut a: CallArgs) -> Result<Value> {
        let given = a.pos.len();
        if given > 1 {
            let message = format!("pop expected at most 1 argument, got {given}");
            return Err(self.err(ErrorKind::Arity, a.span, message));
        }
        let index = match a.pos.pop() {
            Some((iv, is)) => {
                let i = self.int(iv, is, "the index of list.pop()")?;
                Some(self.stable(i, Ty::I64))
            }
            None => None,
        };
        let Value::List(arr, kind) = self.current(name, a.span)? else {
            unreachable!("a changed list reads as a list")
        };
        if kind == ElemKind::Mixed {
            return Err(self.mixed_list(a.span, "taking an item out"));
        }
        let st = self.stored(name, a.span)?;
        let n = self.stable(Expr::Var(st.len), Ty::I64);
        let some = cmp(CmpOp::Gt, n.clone(), Expr::I64(0));
        self.check_plain(some, Exception::IndexError, "pop from empty list", a.span);
        let at = match index {
            None => bin(BinOp::Sub, n.clone(), Expr::I64(1)),
            Some(i) => {
                let at = self.temp(Ty::I64);
                self.emit(Stmt::Assign(at, i.clone()));
                let from_end = Stmt::Assign(at, bin(BinOp::Add, i.clone(), n.clone()));
                self.emit(Stmt::If(
                    cmp(CmpOp::Lt, i, Expr::I64(0)),
                    vec![from_end],
                    vec![],
                ));
                let at = Expr::Var(at);
                let inside = bin(
                    BinOp::And,
                    cmp(CmpOp::Ge, at.clone(), Expr::I64(0)),
                    cmp(CmpOp::Lt, at.clone(), n.clone()),
                );
                let message = "pop index out of range";
                self.check_plain(inside, Exception::IndexError, message, a.span);
                at
            }
        };
        let item = self.list_item(&arr, kind, at.clone());
        let item = self.stable(item, arr.ty);
        self.delete_at(&st, at, n)?;
        Ok(Value::Scalar(item, arr.ty))
    }

    /// `name.remove(value)`: deletes the first item equal to `value` (`ValueError` where none
    /// is; a NaN searched among NaNs raises, as `in` does: see `lists::search`).
    fn list_remove(&mut self, name: &str, mut a: CallArgs) -> Result<()> {
        let arg = self.one_argument(ListMethod::Remove, &mut a)?;
        let list = self.current(name, a.span)?;
        let found = lists::search(self, Search::Remove, (list, a.span), arg, a.span)?;
        let (at, _) = self.scalar(found, a.span, "a position")?;
        let at = self.stable(at, Ty::I64);
        let st = self.stored(name, a.span)?;
        let n = self.stable(Expr::Var(st.len), Ty::I64);
        self.delete_at(&st, at, n)
    }

    /// `name.sort(key=None, reverse=False)`: the list in `sorted()`'s order.
    fn list_sort(&mut self, name: &str, mut a: CallArgs) -> Result<()> {
        if !a.pos.is_empty() {
            return Err(self.err(
                ErrorKind::Arity,
                a.span,
                "sort() takes no positional arguments",
            ));
        }
        let mut take = |key: &str| {
            let i = a.kw.iter().position(|(n, _, _)| n == key)?;
            let (_, v, s) = a.kw.remove(i);
            Some((v, s))
        };
        let (key, reverse) = (take("key"), take("reverse"));
        if let Some((n, _, s)) = a.kw.first() {
            let message = format!("sort() got an unexpected keyword argument '{n}'");
            return Err(self.err(ErrorKind::Arity, *s, message));
        }
        let reverse = lists::sort_options(self, "list.sort", key, reverse)?;
        let list = self.current(name, a.span)?;
        let sorted = lists::sort_sequence(self, (list, a.span), reverse, a.span)?;
        self.assign_growing_list(name, sorted, a.span)
    }
}

/// The names whose very object `e` may give back: a name, the items of a tuple or list display,
/// either branch of a conditional or of `and`/`or`. (An item `v[i]` of a list changed in place is
/// a number; a tuple or list holding such a list is refused where it is made.)
fn held_names<'e>(e: &'e ast::Expr, out: &mut Vec<&'e str>) {
    match &e.kind {
        ast::ExprKind::Name(n) => out.push(n),
        ast::ExprKind::Tuple(items) | ast::ExprKind::List(items) => {
            items.iter().for_each(|i| held_names(i, out))
        }
        ast::ExprKind::IfExp { body, orelse, .. } => {
            held_names(body, out);
            held_names(orelse, out);
        }
        ast::ExprKind::BoolOp(_, items) => items.iter().for_each(|i| held_names(i, out)),
        _ => {}
    }
}

/// Each name a target binds, with the expression it gets: its own item where a tuple target
/// meets a tuple display of the same length, else the whole value.
fn target_sources<'e>(
    target: &'e ast::Expr,
    value: &'e ast::Expr,
    out: &mut Vec<(&'e str, &'e ast::Expr)>,
) {
    match (&target.kind, &value.kind) {
        (ast::ExprKind::Name(n), _) => out.push((n, value)),
        (
            ast::ExprKind::Tuple(ts) | ast::ExprKind::List(ts),
            ast::ExprKind::Tuple(vs) | ast::ExprKind::List(vs),
        ) if ts.len() == vs.len() => {
            for (t, v) in ts.iter().zip(vs) {
                target_sources(t, v, out);
            }
        }
        (ast::ExprKind::Tuple(ts) | ast::ExprKind::List(ts), _) => {
            for t in ts {
                target_sources(t, value, out);
            }
        }
        _ => {}
    }
}
