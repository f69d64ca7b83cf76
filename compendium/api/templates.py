"""Templates: the built-ins and a tenant's own (create, read, new version, delete, validate)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request

from ..errors import NotFound
from ..storage.records import StoredTemplate
from ..templates.registry import builtin_names, load_template, show_template
from ..tenancy import (
    parse_uploaded,
    save_template,
    stored_template,
    system_store,
    template_record_id,
)
from .auth import Tenant_, store_of
from .errors import COMMON, errors
from .pagination import Paged, PageParams, page_of
from .schemas import TEMPLATE_NAME, NamedTemplateIn, TemplateCheck, TemplateIn, TemplateOut

router = APIRouter(prefix="/templates", tags=["templates"], responses=COMMON)


def _builtin(name: str, *, text: bool = False) -> dict[str, Any]:
    t = load_template(name, allow_paths=False)
    return {"name": t.name, "version": t.version, "description": t.description, "source": "builtin",
            "yaml": show_template(name) if text else None}


def _own(record: StoredTemplate, *, text: bool = False) -> dict[str, Any]:
    return {"name": record.name, "version": record.version, "description": record.description,
            "source": "tenant", "yaml": record.yaml if text else None, "updated_at": record.updated_at}


@router.get("", response_model=Paged[TemplateOut])
async def list_templates(request: Request, who: Tenant_, page: Annotated[PageParams, Depends()]) -> dict:
    """The built-in templates and the tenant's own, by name."""
    items = {name: _builtin(name) for name in builtin_names()}
    async for record in system_store(store_of(request)).scan(StoredTemplate, {"tenant": who}):
        items[record.name] = _own(record)  # type: ignore[arg-type]
    return page_of([items[n] for n in sorted(items)], lambda t: t["name"], page)


@router.post("", status_code=201, response_model=TemplateOut, responses=errors(409))
async def create_template(body: TemplateIn, request: Request, who: Tenant_) -> dict:
    return _own(await save_template(store_of(request), who, body.yaml, create=True), text=True)


@router.post("/validate", response_model=TemplateCheck)
async def validate_template(body: TemplateIn, who: Tenant_) -> dict:
    """Check a template without saving it: 422 names the line and key of the first problem."""
    t = await parse_uploaded(body.yaml)  # in a worker process with a deadline
    return {"valid": True, "name": t.name, "version": t.version}


@router.get("/{name}", response_model=TemplateOut, responses=errors(404))
async def read_template(name: str, request: Request, who: Tenant_) -> dict:
    own = await stored_template(store_of(request), who, name)
    if own is not None:
        return _own(own, text=True)
    if name in builtin_names():
        return _builtin(name, text=True)
    raise NotFound(f"no template {name!r}", field="name")


@router.put("/{name}", response_model=TemplateOut, responses=errors(404))
async def update_template(name: Annotated[str, Path(pattern=TEMPLATE_NAME)], body: NamedTemplateIn,
                          request: Request, who: Tenant_) -> dict:
    """Replace the template's YAML; the stored version goes up by one."""
    return _own(await save_template(store_of(request), who, body.yaml, name=name, create=False), text=True)


@router.delete("/{name}", status_code=204, responses=errors(404))
async def delete_template(name: str, request: Request, who: Tenant_) -> None:
    store = store_of(request)
    if await stored_template(store, who, name) is None:
        raise NotFound(f"no template {name!r} of yours (built-ins cannot be deleted)", field="name")
    await system_store(store).delete(StoredTemplate, {"id": template_record_id(who, name)})
