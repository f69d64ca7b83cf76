"""Tenants, their API keys (kept hashed) and what each tenant owns: knowledge bases and templates.

System records live in the store scope "_system"; a knowledge base's compiled records live in
the scope f"{tenant}__{kb}" and its documents under DATA_DIR/kbs/{tenant}/{kb}/documents/.
A served workspace's own knowledge base (link_workspace) is the exception: its records stay in
the scope the CLI compiles into and its documents in WORKSPACE/documents/, so the CLI and the
server share one knowledge base.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, NotFound, TemplateError
from .storage.base import Store
from .storage.records import (
    RECORD_TYPES,
    ApiKey,
    KnowledgeBase,
    StoredTemplate,
    Tenant,
)
from .templates.registry import builtin_names, load_template
from .templates.schema import Template
from .templates.untrusted import parse_untrusted_async
from .workspace import DOCUMENTS_DIR, STATE_DIR, STORE_FILE

SYSTEM_SCOPE = "_system"
KEY_PREFIX = "cmp"
# Tenant and knowledge base names become store scopes and folder names: keep them plain.
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


class AlreadyExists(InputError):
    """A resource of that name exists already (the API answers 409)."""


def check_name(value: str, *, field: str) -> str:
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise InputError(
            f"{field} {value!r} must be 1-63 lowercase letters, digits or '-', starting with a "
            "letter or digit",
            field=field,
        )
    return value


def system_store(store: Store) -> Store:
    return store.for_kb(SYSTEM_SCOPE)


def server_store_url(store_url: str, data_dir: Path) -> str:
    """The server's store: the configured URL, or a SQLite file in DATA_DIR/.compendium/."""
    if store_url:
        return store_url
    return f"sqlite:///{(Path(data_dir) / STATE_DIR / STORE_FILE).resolve()}"


@dataclass(frozen=True)
class WorkspaceLink:
    """The workspace a key made inside it gives its tenant (see link_workspace)."""

    folder: Path
    knowledge_base: str
    default_template: str
    own_store: bool = False  # its store is a SQLite file inside it: every tenant there was made there


async def issue_key(url: str, tenant: str, *, name: str = "", make_tenant: bool = True,
                    workspace: WorkspaceLink | None = None) -> str:
    """`compendium keys create`: a new key for `tenant` (created first if asked and absent);
    inside a workspace, the tenant also gets the workspace's knowledge base."""
    from .storage.factory import open_store

    store = await open_store(url, SYSTEM_SCOPE)
    try:
        if make_tenant and not await system_store(store).get(Tenant, [tenant]):
            await create_tenant(store, tenant)
        if workspace is not None:
            await link_workspace(store, tenant, workspace.folder, knowledge_base=workspace.knowledge_base,
                                 default_template=workspace.default_template)
        _, key = await create_key(store, tenant, name=name)
        return key
    finally:
        await store.close()


# ---- tenants and keys --------------------------------------------------------------------


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: a tenant's key, or the admin (tenant None)."""

    tenant: str | None
    key_id: str = ""

    @property
    def admin(self) -> bool:
        return self.tenant is None


async def create_tenant(store: Store, name: str) -> Tenant:
    check_name(name, field="name")
    system = system_store(store)
    async with system.transaction():
        if await system.get(Tenant, [name]):
            raise AlreadyExists(f"tenant {name!r} already exists", field="name")
        tenant = Tenant(id=name, name=name, created_at=time.time())
        await system.upsert([tenant])
    return tenant


async def get_tenant(store: Store, name: str) -> Tenant:
    found = await system_store(store).get(Tenant, [name])
    if not found:
        raise NotFound(f"no tenant {name!r}")
    return found[0]  # type: ignore[return-value]


def _hash(salt: str, secret: str) -> str:
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


async def create_key(store: Store, tenant: str, *, name: str = "") -> tuple[ApiKey, str]:
    """A new key for `tenant`: the record (hash only) and the key text, shown this once.

    Keys carry 256 random bits, so a salted sha256 is enough (scrypt guards weak passwords).
    """
    await get_tenant(store, tenant)
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    record = ApiKey(
        id=key_id, tenant=tenant, name=name, salt=salt, hash=_hash(salt, secret),
        created_at=time.time(),
    )
    await system_store(store).upsert([record])
    return record, f"{KEY_PREFIX}_{key_id}_{secret}"


async def authenticate(store: Store, key: str, *, admin_key: str | None = None) -> Caller | None:
    """The caller a key belongs to, or None when the key is unknown, revoked or wrong."""
    if admin_key and hmac.compare_digest(key.encode(), admin_key.encode()):
        return Caller(tenant=None)
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not re.fullmatch(r"[0-9a-f]{16}", parts[1]):
        return None
    found = await system_store(store).get(ApiKey, [parts[1]])
    if not found:
        return None
    record: ApiKey = found[0]  # type: ignore[assignment]
    if record.revoked or not hmac.compare_digest(_hash(record.salt, parts[2]), record.hash):
        return None
    return Caller(tenant=record.tenant, key_id=record.id)


# ---- knowledge bases -----------------------------------------------------------------------


def kb_id(tenant: str, name: str) -> str:
    return f"{tenant}__{name}"


def kb_store(store: Store, tenant: str, name: str) -> Store:
    """The scope holding the knowledge base's compiled records."""
    return store.for_kb(kb_id(tenant, name))


def kb_folder(data_dir: Path, tenant: str, name: str) -> Path:
    """DATA_DIR/kbs/TENANT/KB: a workspace-shaped folder (documents/ inside it)."""
    return Path(data_dir) / "kbs" / check_name(tenant, field="tenant") / check_name(name, field="knowledge_base")


def kb_documents(data_dir: Path, tenant: str, name: str) -> Path:
    return kb_folder(data_dir, tenant, name) / DOCUMENTS_DIR


def kb_records(store: Store, kb: KnowledgeBase) -> Store:
    """The scope holding this knowledge base's compiled records (a workspace's: the CLI's scope)."""
    return store.for_kb(kb.scope) if kb.workspace else kb_store(store, kb.tenant, kb.name)


def kb_root(data_dir: Path, kb: KnowledgeBase) -> Path:
    """The workspace-shaped folder whose documents/ holds this knowledge base's documents."""
    return Path(kb.workspace) if kb.workspace else kb_folder(data_dir, kb.tenant, kb.name)


async def link_workspace(store: Store, tenant: str, workspace: Path, *, knowledge_base: str,
                         default_template: str) -> KnowledgeBase:
    """Give `tenant` the workspace's own knowledge base (what `compendium keys create` does in a
    workspace): the server then reads and compiles what the CLI does, in the same store."""
    try:
        name = check_name(knowledge_base, field="knowledge_base")
    except InputError as exc:
        raise InputError(f"{Path(workspace) / 'compendium.yaml'}: {exc.message}", field="knowledge_base",
                         hint="the server names knowledge bases in addresses: rename it there") from exc
    folder = str(workspace)  # resolved by the caller
    system = system_store(store)
    now = time.time()
    async with system.transaction():
        found = await system.get(KnowledgeBase, [kb_id(tenant, name)])
        kb: KnowledgeBase | None = found[0] if found else None  # type: ignore[assignment]
        if kb is not None and kb.workspace != folder:
            where = f"the workspace {kb.workspace}" if kb.workspace else "the server"
            raise AlreadyExists(
                f"tenant {tenant!r} already has a knowledge base {name!r} in {where}",
                field="knowledge_base", hint="set another knowledge_base in compendium.yaml",
            )
        if kb is None:
            kb = KnowledgeBase(id=kb_id(tenant, name), tenant=tenant, name=name, created_at=now,
                               description=f"the workspace {folder}", default_template=default_template)
        kb.workspace, kb.scope, kb.updated_at = folder, name, now
        kb.default_template = default_template  # compendium.yaml decides, as for the CLI
        await system.upsert([kb])
    return kb


async def attach_workspace(store: Store, link: WorkspaceLink) -> list[str]:
    """When `compendium serve` starts in a workspace: bring its knowledge base up to date for the
    tenants it was given to (compendium.yaml may have changed), and when the store is the
    workspace's own file (each of its tenants was made there) give it to every tenant. Returns
    the tenants that have it."""
    system = system_store(store)
    linked = {kb.tenant async for kb in system.scan(KnowledgeBase) if kb.workspace == str(link.folder)}  # type: ignore[attr-defined]
    if link.own_store:
        linked |= {t.id async for t in system.scan(Tenant)}
    done = []
    for tenant in sorted(linked):
        try:
            await link_workspace(store, tenant, link.folder, knowledge_base=link.knowledge_base,
                                 default_template=link.default_template)
        except AlreadyExists:
            continue  # that tenant has a server knowledge base of the same name: leave it be
        done.append(tenant)
    return done


async def create_kb(store: Store, data_dir: Path, kb: KnowledgeBase) -> KnowledgeBase:
    check_name(kb.name, field="name")
    kb.id = kb_id(kb.tenant, kb.name)
    kb.created_at = kb.updated_at = time.time()
    system = system_store(store)
    async with system.transaction():
        if await system.get(KnowledgeBase, [kb.id]):
            raise AlreadyExists(f"knowledge base {kb.name!r} already exists", field="name")
        await system.upsert([kb])
    kb_documents(data_dir, kb.tenant, kb.name).mkdir(parents=True, exist_ok=True)
    return kb


async def get_kb(store: Store, tenant: str, name: str) -> KnowledgeBase:
    """The tenant's knowledge base; another tenant's (or none) is NotFound, never 'forbidden'."""
    found = await system_store(store).get(KnowledgeBase, [kb_id(tenant, name)])
    if not found or found[0].tenant != tenant:  # type: ignore[attr-defined]
        raise NotFound(f"no knowledge base {name!r}", field="knowledge_base")
    return found[0]  # type: ignore[return-value]


async def delete_kb(store: Store, data_dir: Path, tenant: str, name: str) -> None:
    """Remove the knowledge base, every record compiled for it and its documents. A workspace's
    knowledge base is only unlinked from the tenant: the workspace keeps its documents and wiki."""
    kb = await get_kb(store, tenant, name)
    if kb.workspace:
        await system_store(store).delete(KnowledgeBase, {"id": kb.id})
        return
    scoped = kb_store(store, tenant, name)
    async with scoped.transaction():
        for kind in RECORD_TYPES.values():
            await scoped.delete(kind, {})
    await system_store(store).delete(KnowledgeBase, {"id": kb.id})
    shutil.rmtree(kb_folder(data_dir, tenant, name), ignore_errors=True)


# ---- templates -----------------------------------------------------------------------------


def template_record_id(tenant: str, name: str) -> str:
    return f"{tenant}__{name}"


async def stored_template(store: Store, tenant: str, name: str) -> StoredTemplate | None:
    found = await system_store(store).get(StoredTemplate, [template_record_id(tenant, name)])
    return found[0] if found and found[0].tenant == tenant else None  # type: ignore[return-value,attr-defined]


async def parse_uploaded(text: str, *, name: str | None = None) -> Template:
    """Validate uploaded template YAML (strict schema, sandboxed prompts); TemplateError if not.
    It is checked in a worker process with a deadline, off the event loop."""
    if not isinstance(text, str) or not text.strip():
        raise TemplateError("the template is empty", file="<upload>", key="yaml")
    return await parse_untrusted_async(text, source="<upload>", default_name=name)


async def save_template(store: Store, tenant: str, text: str, *, name: str | None = None,
                        create: bool) -> StoredTemplate:
    """Create (create=True) or update the tenant's template; an update is version + 1."""
    template = await parse_uploaded(text, name=name)
    if name is not None and template.name != name:
        raise TemplateError(
            f"the URL names {name!r} but the YAML declares name {template.name!r}",
            file="<upload>", key="name",
        )
    if template.name in builtin_names():
        raise InputError(f"{template.name!r} is a built-in template; choose another name", field="name")
    system = system_store(store)
    now = time.time()
    async with system.transaction():
        existing = await stored_template(store, tenant, template.name)
        if create and existing is not None:
            raise AlreadyExists(f"template {template.name!r} already exists", field="name")
        if not create and existing is None:
            raise NotFound(f"no template {template.name!r}", field="name")
        record = StoredTemplate(
            id=template_record_id(tenant, template.name), tenant=tenant, name=template.name,
            version=max(template.version, 1), yaml=text, description=template.description,
            created_at=now, updated_at=now,
        )
        if existing is not None:
            record.version = max(existing.version + 1, template.version)
            record.created_at = existing.created_at
            record.history = [
                *existing.history[-19:],
                {"version": existing.version, "yaml": existing.yaml, "at": existing.updated_at},
            ]
        await system.upsert([record])
    return record


async def resolve_template(store: Store, tenant: str, name: str) -> Template:
    """A tenant's template by name (their own first, then the built-ins); names only, no paths."""
    own = await stored_template(store, tenant, name)
    if own is not None:
        parsed = await parse_untrusted_async(own.yaml, source=f"template {name}", default_name=name)
        return parsed.model_copy(update={"version": own.version})
    return load_template(name, workspace=None, allow_paths=False)


async def template_exists(store: Store, tenant: str, name: str) -> bool:
    return name in builtin_names() or await stored_template(store, tenant, name) is not None


async def kb_template(store: Store, kb: KnowledgeBase, name: str) -> Template:
    """A template for this knowledge base: a workspace's come from its templates/ folder as
    the CLI's do; a server knowledge base's from its tenant (resolve_template)."""
    if kb.workspace:
        return load_template(name, workspace=Path(kb.workspace), allow_paths=False)
    return await resolve_template(store, kb.tenant, name)


async def kb_template_exists(store: Store, kb: KnowledgeBase, name: str) -> bool:
    if not kb.workspace:
        return await template_exists(store, kb.tenant, name)
    try:
        await kb_template(store, kb, name)
    except (NotFound, TemplateError, InputError):
        return False
    return True
