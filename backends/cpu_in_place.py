"""Loop carries updated in place on the CPU target: a pure pass over a loop body's text.

A body's ``ys = ys.at[i].set(v)`` (a scatter) or ``lax.dynamic_update_slice(ys, ...)``
is emitted as ``V = D.copy()`` then writes into ``V``: a copy of the whole carry per
step, so a ``fori_loop`` filling an ``n``-vector one element a step cost O(n²) (40,000
steps: 0.36 s against numpy's 0.02 s). The loop owns its carries (the loop statement
copies an initial value once when the body overwrites it), so where nothing reads ``D``
after the copy, the body may write into ``D`` itself: ``V = D``. This module decides
where, from the body's statements as text (after the planner's fusion and ordering, so
that what runs after the copy is what the text says):

* the copy's source is a donated parameter (a carry), or a name bound to its buffer by
  ``X = Y`` or ``X = Y.reshape(...)`` (the ``.at`` updates' flat view);
* before the copy, the buffer's names are only read element by element (a subscript with
  one integer index per axis) or bound again as above, so no view of it lives on;
* after the copy, no name bound to it before the copy appears at all;
* the body returns the updated buffer (or a reshape of it) once, in the position of that
  carry, so the next step's parameter is the same buffer and no two carries share one.

Anything else (a view passed to a call, a slice, a second return) keeps the copy.
"""
import ast
import re

__all__ = ["donate_in_place"]

_COPY = re.compile(r"([A-Za-z_]\w*) = ([A-Za-z_]\w*)\.copy\(\)")


def _alias_source(node):
    """``Y`` of an alias binding's value ``Y`` or ``Y.reshape(...)``, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "reshape" and isinstance(node.func.value, ast.Name)):
        return node.func.value.id
    return None


def _reshape_rank(node):
    """The rank a reshape binding's value gives (None where it cannot be read)."""
    if isinstance(node, ast.Name):
        return -1                                   # the same as its source's
    args = node.args
    if len(args) == 1 and isinstance(args[0], ast.Tuple):
        return len(args[0].elts)
    if args and not node.keywords and all(not isinstance(a, ast.Starred) for a in args):
        return len(args)
    return None


def _copy_source(node):
    """``Y`` of a value ``Y.copy()``, else None."""
    if (isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute)
            and node.func.attr == "copy" and isinstance(node.func.value, ast.Name)):
        return node.func.value.id
    return None


def _binding(node, links):
    """``(target, source, rank or -1 for the source's)`` of an assignment that binds a name
    to a buffer's alias (``X = Y``, ``X = Y.reshape(...)``; with ``links`` also the next
    link of a chain, ``X = Y.copy()``), else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return None
    src = _alias_source(node.value)
    if src is not None:
        return node.targets[0].id, src, _reshape_rank(node.value)
    src = _copy_source(node.value) if links else None
    return None if src is None else (node.targets[0].id, src, -1)


def _bound(tree, ranks, links=False):
    """``ranks`` (name -> rank of the names a buffer starts with) grown by every name
    ``tree`` binds to one of them (:func:`_binding`), to a fixed point."""
    ranks, grew = dict(ranks), True
    while grew:
        grew = False
        for node in ast.walk(tree):
            b = _binding(node, links)
            if b and b[1] in ranks and b[0] not in ranks:
                ranks[b[0]] = ranks[b[1]] if b[2] == -1 else b[2]
                grew = True
    return ranks


def _parents(tree):
    out = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def _element_read(node, parent, rank):
    """Whether the name ``node`` is read (or written) as one element of an array of
    ``rank`` axes."""
    if not isinstance(parent, ast.Subscript) or parent.value is not node or rank is None:
        return False
    idx = parent.slice
    parts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
    return len(parts) == rank and not any(isinstance(p, (ast.Slice, ast.Starred))
                                          for p in parts)


def _names(tree):
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _parse(lines):
    try:
        return ast.parse("\n".join(lines) if lines else "pass")
    except SyntaxError:
        return None


def _uses_are_elements(tree, group, links=False):
    """Whether the names of ``group`` (name -> rank) appear in ``tree`` only as elements
    read or written (a write: into the buffer an earlier link of a chain made ours), on
    either side of a binding :func:`_binding` follows, or in the returned tuple."""
    parents = _parents(tree)
    ret = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Return) else None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in group):
            continue
        parent = parents.get(node)
        if ret is not None and parent is ret.value \
                or _element_read(node, parent, group[node.id]):
            continue
        if parent is not None and parent.__class__ in (ast.Attribute, ast.Assign):
            assign = parents.get(parents.get(parent)) if isinstance(parent, ast.Attribute) \
                else parent
            b = _binding(assign, links)
            if b and b[1] in group:
                continue            # X = V, X = V.reshape(...), (links) X = V.copy()
        return False
    return True


def _returned_at(tree, group, position):
    """Whether ``tree`` returns the buffer of ``group`` once, as a name, at ``position``."""
    ret = tree.body[-1] if tree.body else None
    if not isinstance(ret, ast.Return) or not isinstance(ret.value, ast.Tuple):
        return False
    hits = [i for i, e in enumerate(ret.value.elts) if _names(e) & set(group)]
    return hits == [position] and isinstance(ret.value.elts[position], ast.Name)


def donate_in_place(lines, expand, donated, ranks, ret):
    """``(lines, overwritten)``: the body's statement ``lines`` with each copy of a donated
    carry (``V = D.copy()`` where ``D`` is bound to the buffer of a parameter in
    ``donated``, a map parameter name -> its position in the returned tuple) made
    ``V = D`` where the rules of this module allow, and the parameters so overwritten.
    ``expand(line)`` gives the statements a line stands for (a loop nest's
    placeholder: its nest); ``ranks`` the parameters' ranks; ``ret`` the return line.

    >>> body = ["x = D[2]", "V = D.copy()", "V[0] = x", "W = V.reshape((2, 2))"]
    >>> donate_in_place(body, lambda s: [s], {"D": 1}, {"D": 1}, "return (e, W)")
    (['x = D[2]', 'V = D', 'V[0] = x', 'W = V.reshape((2, 2))'], {'D'})

    A later read of ``D``, or a return elsewhere, keeps the copy:

    >>> donate_in_place(body + ["y = D[0]"], lambda s: [s], {"D": 1}, {"D": 1},
    ...                 "return (e, W)")[1]
    set()
    >>> donate_in_place(body, lambda s: [s], {"D": 1}, {"D": 1}, "return (W, W)")[1]
    set()
    """
    out = list(lines)
    done = {}
    for k, line in enumerate(out):
        m = _COPY.fullmatch(line)
        if not m:
            continue
        target, src = m.groups()
        tb = _parse([s for x in out[:k] for s in expand(x)])
        ta = _parse([s for x in out[k + 1:] for s in expand(x)] + [ret])
        if tb is None or ta is None:
            continue
        for param, position in donated.items():
            # the names bound to the parameter's buffer before the copy: read element by
            # element there, never after; the copy's result (and the chain's next links)
            # used element by element after, and returned once in the carry's place
            group = _bound(tb, {param: ranks[param]})
            if src not in group:
                continue
            if _uses_are_elements(tb, group) and not _names(ta) & set(group):
                new = _bound(ta, {target: group[src]}, links=True)
                if _uses_are_elements(ta, new, links=True) and _returned_at(ta, new, position):
                    done.setdefault(param, []).append((k, line))
                    out[k] = f"{target} = {src}"
            break
    # a chain ``Q = D.copy(); ...; R = Q.copy()`` was taken link by link, each taking the
    # next copy for one more name of the buffer: the buffer must be what is returned once
    # every link is decided, else the chain keeps its copies
    whole = _parse([s for x in out for s in expand(x)] + [ret])
    overwritten = set()
    for param, links in done.items():
        if whole is not None and _returned_at(whole, _bound(whole, {param: 0}), donated[param]):
            overwritten.add(param)
        else:
            for k, line in links:
                out[k] = line
    return out, overwritten
