"""A griffe extension: the docstrings' reStructuredText roles as cross-references of the API page.

The package's docstrings name other objects the Sphinx way (:class:`~llama_index_pearl.config.PearlConfig`,
:meth:`retrieve`), which ``help()`` shows well and mkdocstrings' Google parser leaves verbatim. When the site is
built (``mkdocs.yml``: the mkdocstrings handler's ``extensions``), each role becomes an optional cross-reference of
mkdocs-autorefs: a link where the API page documents the object (a public name, a block of ``docs/api.md``, or
a member of one, a member of a class's mixin read as the class's own), its name in code where it does not. A ``~``
shows the last part of the name, as in Sphinx; a name without the package's prefix is read from the object's
module, or its class.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`(?P<short>~?)(?P<target>[^`]+)`")
PACKAGE = "llama_index_pearl"
API_PAGE = Path(__file__).with_name("api.md")


def documented_paths() -> set[str]:
    """The objects the API page documents with a directive of their own: the public names and its blocks."""
    import llama_index_pearl

    paths = {f"{module}.{name}" for name, module in llama_index_pearl._PUBLIC.items()}
    return paths | set(re.findall(r"^::: (\S+)$", API_PAGE.read_text(encoding="utf-8"), re.M))


def _targets(name: str, obj: griffe.Object) -> str:
    """The full dotted path a role names, read from where the docstring is."""
    if name.startswith(PACKAGE + ".") or name == PACKAGE:
        return name
    module = obj.module.path
    if name.startswith("."):  # relative to the module's package, as Sphinx reads ~.search.TableSearch
        return module.rsplit(".", 1)[0] + name
    owner = obj if obj.is_class else obj.parent if obj.parent is not None and obj.parent.is_class else None
    first = name.split(".", 1)[0]
    if owner is not None and first in owner.all_members:
        return f"{owner.path}.{name}"
    return f"{module}.{name}"


def cross_references(text: str, obj: griffe.Object, linked: dict[str, str]) -> str:
    """``text`` with each role as a link to the API page where it documents the object, else its name in code.

    Args:
        text: A docstring.
        obj: The object it documents (relative names are read from it).
        linked: The path of each object the API page documents -> the identifier of its heading.
    """

    def reference(found: re.Match) -> str:
        name = found["target"].strip()
        shown = html.escape(name.lstrip(".").rsplit(".", 1)[-1] if found["short"] else name.lstrip("."))
        identifier = linked.get(_targets(name, obj))
        if identifier is None:
            return f"<code>{shown}</code>"
        return f'<autoref identifier="{html.escape(identifier, quote=True)}" optional><code>{shown}</code></autoref>'

    return ROLE.sub(reference, text)


def _linked(pkg: griffe.Module) -> dict[str, str]:
    """Each object the API page shows -> its heading: the documented objects, their members, and the members of a
    documented class's mixins (bases of the package that nothing documents, read as that class's, where one class
    alone has them)."""
    linked: dict[str, str] = {}
    seen: dict[str, set[str]] = {}
    for path in documented_paths():
        try:
            obj = pkg[path.removeprefix(PACKAGE + ".")]
        except KeyError:
            continue
        linked[path] = path
        if not obj.is_class:
            continue
        for name, member in obj.all_members.items():
            if name.startswith("_"):
                continue
            linked[f"{path}.{name}"] = f"{path}.{name}"
            if member.is_alias and member.inherited:  # defined by a base: its own path names it there
                seen.setdefault(member.target_path, set()).add(f"{path}.{name}")
    for origin, owners in seen.items():
        if len(owners) == 1 and origin not in linked:
            linked[origin] = next(iter(owners))
    return linked


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


class RestRoles(griffe.Extension):
    """Rewrites the roles of every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path != PACKAGE:
            return
        linked = _linked(pkg)
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = cross_references(obj.docstring.value, obj, linked)
