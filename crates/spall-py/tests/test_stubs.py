"""The type stubs name what the module has, and the module has nothing they leave out."""

import ast
import pathlib

import spall

STUBS = pathlib.Path(spall.__file__).with_name("__init__.pyi")


def public(names):
    return {n for n in names if not n.startswith("_")}


def test_the_stubs_match_the_module():
    tree = ast.parse(STUBS.read_text())
    top = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top[node.name] = public(
                n.name if isinstance(n, ast.FunctionDef) else n.target.id
                for n in node.body
                if isinstance(n, ast.FunctionDef)
                or (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
            )
        elif isinstance(node, ast.FunctionDef):
            top[node.name] = None
    assert public(top) == public(spall.__all__) - {"__version__"}
    for name, members in top.items():
        obj = getattr(spall, name)
        assert obj.__doc__, f"{name} has no docstring"
        if members is None:
            continue
        # Exceptions' attributes are set per instance; everything else is on the class.
        if issubclass(obj, BaseException):
            continue
        have = public(dir(obj))
        assert members == have, (name, "only in the stubs", members - have, "only in the module", have - members)
