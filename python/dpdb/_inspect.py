"""Structured answers about a paused thread, for clients that are not a terminal (`dpdb dap`):
its stack, each frame's scopes, variables by reference with paging, evaluation in a frame and
assignment. pdb's console gives text; an IDE needs ids it can ask about again.

The paused thread answers, between two lines of its console (it is the one thread that may touch
its frames while it is paused). References are small numbers valid until the thread runs again:
`forget()` is called at every stop."""

import io
import linecache
import sys
import traceback

# A value's text is cut here: a frame (1 MiB) holds every answer, and an IDE shows one line.
_VALUE_CHARACTERS = 500
_NAME_CHARACTERS = 200
# One answer lists at most this many children; an IDE asks for more with start and count.
_PAGE = 100
# Together well under a frame (1 MiB) even when JSON escapes every character in six bytes.
_REPL_CHARACTERS = 60000
_SOURCE_CHARACTERS = 150000
# pdb commands that resume the thread or take the console over: `dpdb dap` runs the resuming
# ones itself (as input lines, with the events an IDE needs), and a repl line that waited for
# more lines would hang the request.
_NOT_IN_REPL = frozenset((
    "n", "next", "s", "step", "r", "return", "c", "cont", "continue", "unt", "until", "j", "jump",
    "q", "quit", "exit", "run", "restart", "interact", "debug", "commands"))

_MISSING = object()


class InspectError(Exception):
    """A request that cannot be answered: its message goes back to the client."""


def _text(value, limit=_VALUE_CHARACTERS):
    try:
        text = repr(value)
    except Exception as error:  # a broken __repr__ must not break the session
        text = "<repr raised %s>" % type(error).__name__
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _children(value):
    """(named, indexed): what a container shows below it, lazily, and how many there are."""
    if isinstance(value, dict):
        return len(value), 0
    if isinstance(value, (list, tuple)):
        return 0, len(value)
    if isinstance(value, (set, frozenset)):
        return 0, len(value)
    if isinstance(value, (str, bytes, bytearray, int, float, complex, bool, type(None))):
        return 0, 0
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and attributes:
        return len(attributes), 0
    return 0, 0


class Inspector:
    """Answers one session's requests (dicts in, dicts out) from its debugger's stack."""

    def __init__(self, debugger):
        self.debugger = debugger
        self.forget()

    def forget(self):
        self._refs = {}  # ref -> ("scope", frame_index, mapping) or ("value", value)
        self._locals = {}  # frame index -> its locals, read once per stop (see _frame_locals)

    def answer(self, request):
        command = request.get("command") if isinstance(request, dict) else None
        handler = getattr(self, "_do_" + command, None) if isinstance(command, str) else None
        if handler is None:
            return {"error": "unknown inspect command %r" % (command,)}
        try:
            return handler(request)
        except InspectError as error:
            return {"error": str(error)}
        except Exception as error:  # the thread must stay paused and answering whatever we ask
            return {"error": "%s: %s" % (type(error).__name__, _text(error, 300))}

    # --- frames -------------------------------------------------------------------------------

    def _stack(self):
        stack = getattr(self.debugger, "stack", None)
        if not stack:
            raise InspectError("the thread has no stack to show")
        return stack

    def _frame(self, request):
        stack = self._stack()
        index = request.get("frame")
        if index is None or index == -1:
            index = self.debugger.curindex
        if not isinstance(index, int) or not 0 <= index < len(stack):
            raise InspectError("no frame %r (the thread may have run on)" % (index,))
        return index, stack[index][0]

    def _frame_locals(self, index, frame):
        # Before 3.13, every read of frame.f_locals copies the fast locals over the dict again,
        # which would undo an assignment made in it; pdb keeps the current frame's dict for that
        # reason, and the engine writes it back when the thread resumes.
        if index not in self._locals:
            if frame is getattr(self.debugger, "curframe", None):
                self._locals[index] = self.debugger.curframe_locals
            else:
                self._locals[index] = frame.f_locals
        return self._locals[index]

    def _do_stack(self, request):
        frames = []
        for index, (frame, line) in reversed(list(enumerate(self._stack()))):
            code = frame.f_code
            frames.append({"frame": index, "name": code.co_name, "path": code.co_filename,
                           "line": line})
        return {"frames": frames, "current": self.debugger.curindex}

    def _do_scopes(self, request):
        index, frame = self._frame(request)
        scopes = [{"name": "Locals", "ref": self._keep(("scope", index, None))}]
        if frame.f_globals is not self._frame_locals(index, frame):  # a module's frame
            scopes.append({"name": "Globals", "ref": self._keep(("scope", index, "globals"))})
        return {"scopes": scopes}

    # --- variables ----------------------------------------------------------------------------

    def _keep(self, entry):
        ref = len(self._refs) + 1
        self._refs[ref] = entry
        return ref

    def _entry(self, request):
        entry = self._refs.get(request.get("ref"))
        if entry is None:
            raise InspectError("no variables reference %r (the thread may have run on)"
                               % (request.get("ref"),))
        return entry

    def _scope_mapping(self, entry):
        _, index, which = entry
        frame = self._stack()[index][0]
        return frame.f_globals if which == "globals" else self._frame_locals(index, frame)

    def _describe(self, name, value):
        named, indexed = _children(value)
        item = {"name": _text(name, _NAME_CHARACTERS) if not isinstance(name, str)
                else name[:_NAME_CHARACTERS],
                "value": _text(value), "type": type(value).__name__, "ref": 0}
        if named or indexed:
            item["ref"] = self._keep(("value", value))
            if named:
                item["named"] = named
            if indexed:
                item["indexed"] = indexed
        return item

    def _do_variables(self, request):
        entry = self._entry(request)
        start = max(0, int(request.get("start") or 0))
        count = int(request.get("count") or 0)
        count = _PAGE if count <= 0 else min(count, _PAGE)
        if entry[0] == "scope":
            pairs = list(self._scope_mapping(entry).items())
        else:
            value = entry[1]
            if isinstance(value, dict):
                pairs = [(_text(key, _NAME_CHARACTERS), item) for key, item in value.items()]
            elif isinstance(value, (list, tuple)):
                window = value[start:start + count]
                return {"variables": [self._describe("[%d]" % (start + offset), item)
                                      for offset, item in enumerate(window)],
                        "total": len(value)}
            elif isinstance(value, (set, frozenset)):
                items = sorted(value, key=_text)
                return {"variables": [self._describe("{%d}" % (start + offset), item)
                                      for offset, item in enumerate(items[start:start + count])],
                        "total": len(items)}
            else:
                pairs = list(vars(value).items())
        return {"variables": [self._describe(name, item)
                              for name, item in pairs[start:start + count]],
                "total": len(pairs)}

    def _do_set_variable(self, request):
        entry = self._entry(request)
        name, text = request.get("name"), request.get("value")
        if not isinstance(name, str) or not isinstance(text, str):
            raise InspectError("setVariable needs a name and a value")
        if entry[0] == "scope":
            index = entry[1]
            frame = self._stack()[index][0]
            if (entry[2] is None and sys.version_info < (3, 13)
                    and frame is not getattr(self.debugger, "curframe", None)):
                raise InspectError("before Python 3.13 only the current frame's locals can be "
                                   "changed (select that frame, or use `up`/`down` in the repl)")
            value = eval(text, frame.f_globals, self._frame_locals(index, frame))
            self._scope_mapping(entry)[name] = value
        else:
            container = entry[1]
            frame = self._frame({})[1]
            value = eval(text, frame.f_globals, self._frame_locals(self.debugger.curindex, frame))
            if isinstance(container, dict):
                keys = [key for key in container if _text(key, _NAME_CHARACTERS) == name]
                if len(keys) != 1:
                    raise InspectError("no key %s in that dict" % name)
                container[keys[0]] = value
            elif isinstance(container, list) and name.startswith("[") and name.endswith("]"):
                container[int(name[1:-1])] = value
            elif hasattr(container, "__dict__") and not isinstance(container, tuple):
                setattr(container, name, value)
            else:
                raise InspectError("a %s cannot be changed" % type(container).__name__)
        return self._describe(name, value)

    def _do_source(self, request):
        """A file's text as this process sees it, for an IDE that has no copy of it."""
        path = request.get("path")
        lines = linecache.getlines(path) if isinstance(path, str) else []
        if not lines:
            raise InspectError("no source for %r in this process" % (path,))
        text = "".join(lines)
        return {"content": text[:_SOURCE_CHARACTERS]}

    def _do_exception(self, request):
        """The exception the thread stopped for (DAP's exceptionInfo)."""
        exception = getattr(self.debugger, "exception", None)
        if exception is None:
            raise InspectError("the thread did not stop for an exception")
        kind = type(exception)
        name = kind.__qualname__ if kind.__module__ == "builtins" else "%s.%s" % (
            kind.__module__, kind.__qualname__)
        text = "".join(traceback.format_exception(kind, exception, exception.__traceback__))
        try:
            description = str(exception)[:_VALUE_CHARACTERS]
        except Exception as error:  # a broken __str__ must not break the session
            description = "<str raised %s>" % type(error).__name__
        return {"id": name, "description": description,
                "mode": self.debugger.exception_mode,
                "trace": text[-_REPL_CHARACTERS:]}

    # --- evaluation ---------------------------------------------------------------------------

    def _do_evaluate(self, request):
        expression = request.get("expression")
        if not isinstance(expression, str):
            raise InspectError("evaluate needs an expression")
        if request.get("context") == "repl":
            return self._pdb_command(expression, request)
        index, frame = self._frame(request)
        try:
            value = eval(expression, frame.f_globals, self._frame_locals(index, frame))
        except Exception as error:
            raise InspectError("%s: %s" % (type(error).__name__, _text(error, 300)))
        return self._describe(expression, value)

    def _pdb_command(self, line, request):
        """A repl line is a pdb command (`p x`, `w`, `b 12`, `!x = 1`) or Python, as at the
        prompt, run in the current frame (pdb's `up` and `down` move it); its output is the
        answer."""
        command = self.debugger.parseline(line)[0]
        if command in _NOT_IN_REPL:
            raise InspectError("`%s` is not run from the repl: use the IDE's disconnect button "
                               "(or a terminal's prompt)" % command)
        captured = io.StringIO()
        saved = self.debugger.stdout
        self.debugger.stdout = captured
        try:
            self.debugger.onecmd(line)
        finally:
            self.debugger.stdout = saved
        text = captured.getvalue()
        return {"name": line, "value": text[:_REPL_CHARACTERS].rstrip("\n"),
                "type": "", "ref": 0}
