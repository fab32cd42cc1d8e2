"""The Python face's imports run one way, so that a reader follows a process's start from one
file to the next: start-up, then the link, the control thread, the debugger, its console. The
other modules are leaves that any of them may use and that use none of them. The framework
integrations (python/dpdb/frameworks/) are reached through their registry (the package itself)
only, and use no stage either."""

import ast
import pathlib

FACE = pathlib.Path(__file__).resolve().parents[2] / "python" / "dpdb"

# A module imports only modules of its own stage or of later ones.
STAGES = (
    {"__init__", "_bootstrap", "_attach", "_ctrl_c"},  # start-up
    {"_process"},                           # the link
    {"_control"},                           # the control thread
    {"_debugger", "_waiting_view"},         # pdb, driven through the hub
    {"_console"},                           # a paused thread's stdin and stdout
)
CHAIN = set().union(*STAGES)


def stage_of(module):
    for index, stage in enumerate(STAGES):
        if module in stage:
            return index
    return None


def dpdb_imports(path):
    """The face's modules that a file imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "dpdb":
                found.update(alias.name for alias in node.names)
            elif node.module == "dpdb.frameworks":
                found.update("frameworks." + alias.name for alias in node.names)
            elif node.module.startswith("dpdb."):
                found.add(node.module.split(".", 1)[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "dpdb":
                    found.add("__init__")
                elif alias.name.startswith("dpdb."):
                    found.add(alias.name.split(".", 1)[1])
    return found


def graph():
    """module -> the face's modules it imports; the registry is "frameworks", a framework
    module "frameworks.NAME"."""
    edges = {path.stem: dpdb_imports(path) for path in sorted(FACE.glob("*.py"))}
    for path in sorted((FACE / "frameworks").glob("*.py")):
        name = "frameworks" if path.stem == "__init__" else "frameworks." + path.stem
        edges[name] = dpdb_imports(path)
    return edges


def test_the_face_is_where_the_test_looks():
    assert CHAIN <= set(graph())


def test_each_stage_imports_only_its_own_and_later_stages():
    backwards = []
    for module, imported in graph().items():
        here = stage_of(module)
        for other in imported:
            there = stage_of(other)
            if here is None and there is not None:
                backwards.append("%s (a leaf) imports %s" % (module, other))
            elif here is not None and there is not None and there < here:
                backwards.append("%s imports %s, an earlier stage" % (module, other))
    assert not backwards, "; ".join(sorted(backwards))


def test_the_core_reaches_a_framework_module_only_through_the_registry():
    around = sorted("%s imports %s" % (module, other) for module, imported in graph().items()
                    if not module.startswith("frameworks")
                    for other in imported if other.startswith("frameworks."))
    assert not around, "; ".join(around)


def test_no_module_reaches_itself_through_others():
    edges = graph()
    cycles = []

    def visit(module, path):
        for other in sorted(edges.get(module, ())):
            if other == path[0]:
                cycles.append(" -> ".join(path + [other]))
            elif other not in path:
                visit(other, path + [other])

    for module in edges:
        visit(module, [module])
    assert not cycles, "; ".join(cycles)


def test_the_check_sees_a_backward_import(tmp_path):
    sample = tmp_path / "_console.py"
    sample.write_text("def f():\n    from dpdb import _process\n    import dpdb._control\n")
    assert dpdb_imports(sample) == {"_process", "_control"}
