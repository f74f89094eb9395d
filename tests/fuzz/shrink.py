"""A greedy delta-debugging shrinker over the program tree.

Moves, tried until none makes progress: drop a statement; replace a compound statement by one of
its blocks; replace an expression by one of its children of the same type, or by a constant of its
type. A candidate is kept when it still shows a finding with the same signature (backend, kind).
"""
from __future__ import annotations

import copy
from typing import Callable, Iterator, List

from grammar import Expr, Program, Stmt, leaf

SIMPLE = {"f": ["0.5", "x[0]"], "i": ["1", "len(x)"], "b": ["True"], "a": ["x"]}


def _statement_lists(body: List[Stmt]) -> Iterator[List[Stmt]]:
    yield body
    for s in body:
        for _, block in s.blocks:
            yield from _statement_lists(block)


def _expr_slots(body: List[Stmt]) -> Iterator[tuple]:
    """(list, index) for every expression, outermost first."""
    def walk(container):
        for k, e in enumerate(container):
            yield container, k
            yield from walk(e.children)
    for stmts in _statement_lists(body):
        for s in stmts:
            yield from walk(s.exprs)


def _size(p: Program) -> int:
    return len(p.source())


def _candidates(p: Program) -> Iterator[Program]:
    n_lists = sum(1 for _ in _statement_lists(p.body))
    for li in range(n_lists):
        length = len(list(_statement_lists(p.body))[li])
        for k in range(length):
            q = copy.deepcopy(p)
            stmts = list(_statement_lists(q.body))[li]
            if stmts is q.body and k == len(stmts) - 1:
                continue  # keep the final return
            s = stmts.pop(k)
            yield q
            for b in range(len(s.blocks)):
                q2 = copy.deepcopy(p)
                stmts2 = list(_statement_lists(q2.body))[li]
                stmts2[k:k + 1] = stmts2[k].blocks[b][1]
                yield q2
    n_slots = sum(1 for _ in _expr_slots(p.body))
    for si in range(n_slots):
        container, k = list(_expr_slots(p.body))[si]
        e: Expr = container[k]
        replacements = [c for c in e.children if c.ty == e.ty]
        replacements += [leaf(e.ty, t) for t in SIMPLE.get(e.ty, []) if e.children or e.fmt != t]
        for r in replacements:
            q = copy.deepcopy(p)
            qc, qk = list(_expr_slots(q.body))[si]
            qc[qk] = copy.deepcopy(r)
            yield q


def shrink(p: Program, interesting: Callable[[Program], bool], budget: int = 3000) -> Program:
    """The smallest program found (by source length) for which ``interesting`` holds."""
    tries = 0
    progress = True
    while progress and tries < budget:
        progress = False
        for q in _candidates(p):
            tries += 1
            if tries >= budget:
                break
            if _size(q) < _size(p) and interesting(q):
                p, progress = q, True
                break
    return p
