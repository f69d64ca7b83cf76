"""Checks a template that may come from anyone in a worker child with a deadline, and
remembers the ones that passed; template files are read this way."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..errors import TemplateError
from ..fingerprint import fingerprint
from . import worker
from .loader import MAX_YAML_CHARS, own_prompts, parse_template, read_yaml
from .schema import Template

VALIDATE_DEADLINE = 1.5  # wall seconds to check a template (loader: 1.0 s of CPU for its prompts)

# Templates that passed, by their text: a stored template is resolved at every compile and
# search, and must not queue behind another tenant's slow check each time. Template is frozen.
_CHECKED: OrderedDict[str, Template] = OrderedDict()
_CHECKED_SIZE = 256
_CHECKED_LOCK = threading.Lock()


def parse_untrusted(text: str, *, source: str, default_name: str | None = None) -> Template:
    """loader.parse_template in a child with a deadline; TemplateError if the template is
    invalid or takes longer than VALIDATE_DEADLINE to check."""
    if worker.in_child():
        return parse_template(text, source=source, default_name=default_name)
    if len(text) > MAX_YAML_CHARS:  # refused here: not worth sending to a child
        read_yaml(text, source=source)
    key = fingerprint(text, source, default_name)
    with _CHECKED_LOCK:
        if key in _CHECKED:
            _CHECKED.move_to_end(key)
            return _CHECKED[key]
    result = worker.CHECKS.ask(
        "parse", {"text": text, "source": source, "default_name": default_name},
        seconds=VALIDATE_DEADLINE, where=source,
        too_slow=f"checking the template took longer than {VALIDATE_DEADLINE:g} s and was stopped; "
        "simplify its prompts",
    )  # fmt: skip
    template = Template.model_validate(result)
    if any(own_prompts(template)):
        worker.RENDERS.warm()  # its prompts will render in a worker: start one now
    with _CHECKED_LOCK:
        _CHECKED[key] = template
        while len(_CHECKED) > _CHECKED_SIZE:
            _CHECKED.popitem(last=False)
    return template


async def parse_untrusted_async(text: str, *, source: str, default_name: str | None = None) -> Template:
    """parse_untrusted() off the event loop: other requests go on while a template is checked.
    It waits in a daemon thread of its own, not the loop's shared executor, so a flood of
    slow checks neither starves other work nor holds up the process at exit."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Template] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not done.done():
            done.set_exception(error) if error is not None else done.set_result(result)

    def check() -> None:
        try:
            result, error = parse_untrusted(text, source=source, default_name=default_name), None
        except BaseException as exc:  # handed to the awaiting coroutine
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop closed meanwhile: nobody is waiting

    threading.Thread(target=check, name="template-check", daemon=True).start()
    return await done


def load_template_file(path: Path) -> Template:
    """Read and validate a template file; its name defaults to the file's stem. A template
    file may come from anyone, so it is checked in a worker."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise TemplateError("no such template file", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise TemplateError(f"not UTF-8 text ({exc.reason})", file=str(path)) from exc
    except OSError as exc:
        raise TemplateError(f"cannot read: {exc.strerror}", file=str(path)) from exc
    return parse_untrusted(text, source=str(path), default_name=path.stem)
