"""Message templates in the fake Graph API: what a template send must name and
give (the reference's synchronous template errors), and the listing of a
business account's templates. Only the standard library is used.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.whatsapp_listener import invalid, refuse
from tests.fakes.whatsapp_wire import (
    TEMPLATE_DISABLED,
    TEMPLATE_MISSING,
    TEMPLATE_PARAM_COUNT,
    TEMPLATE_PAUSED,
    TEMPLATE_TOO_LONG,
)

# A template's text parameter may not hold new lines, tabs or more than four
# spaces in a row.
_BAD_PARAM_TEXT = re.compile(r"[\n\t]| {5,}")
_PLACEHOLDER = re.compile(r"\{\{(\d+)\}\}")
# A template's body, parameters in place, is at most this long.
BODY_MAX = 1024


@dataclass
class Template:
    """A message template of the business account, in one language."""

    name: str
    language: str
    status: str
    body_params: int
    category: str
    text: str
    id: str = field(default_factory=lambda: str(secrets.randbelow(10**15)))


def check_template(
    templates: dict[tuple[str, str], Template], template: Any
) -> Template:
    """The named, approved template, with its body's parameter count right;
    raises the refusal Meta answers with otherwise."""
    if not isinstance(template, dict) or not isinstance(template.get("name"), str):
        raise invalid("Param template['name'] is required.")
    language = template.get("language")
    if not isinstance(language, dict) or not isinstance(language.get("code"), str):
        raise invalid("Param template['language']['code'] is required.")
    name, code = template["name"], language["code"]
    found = templates.get((name, code))
    if found is None or found.status not in ("APPROVED", "PAUSED", "DISABLED"):
        details = f"template name ({name}) does not exist in {code}"
        raise refuse(TEMPLATE_MISSING, details)
    if found.status == "PAUSED":
        raise refuse(TEMPLATE_PAUSED, f"Template {name} is paused.")
    if found.status == "DISABLED":
        raise refuse(TEMPLATE_DISABLED, f"Template {name} is disabled.")
    given = body_parameters(template.get("components", []))
    if len(given) != found.body_params:
        details = (
            f"body: number of localizable_params ({len(given)}) does not match the "
            f"expected number of params ({found.body_params})"
        )
        raise refuse(TEMPLATE_PARAM_COUNT, details)
    hydrated = _PLACEHOLDER.sub(lambda m: _filled(m, given), found.text)
    if len(hydrated) > BODY_MAX:
        details = f"The body with its parameters exceeds {BODY_MAX} characters."
        raise refuse(TEMPLATE_TOO_LONG, details)
    return found


def _filled(placeholder: re.Match[str], given: list[str]) -> str:
    """The parameter a ``{{n}}`` placeholder names, or the placeholder."""
    index = int(placeholder.group(1))
    return given[index - 1] if 0 < index <= len(given) else placeholder.group(0)


def body_parameters(components: Any) -> list[str]:
    """The texts the body component gives (checking each one)."""
    if not isinstance(components, list):
        raise invalid("Param template['components'] must be an array.")
    texts: list[str] = []
    for component in components:
        if not isinstance(component, dict) or not isinstance(
            component.get("type"), str
        ):
            raise invalid("Each template component needs a type.")
        parameters = component.get("parameters", [])
        if not isinstance(parameters, list):
            raise invalid("Param components['parameters'] must be an array.")
        if component["type"].lower() != "body":
            continue
        for parameter in parameters:
            if not isinstance(parameter, dict) or parameter.get("type") != "text":
                raise invalid("Body parameters of this template are of type text.")
            value = parameter.get("text")
            if not isinstance(value, str) or not value:
                raise invalid("Param text is required for a text parameter.")
            if _BAD_PARAM_TEXT.search(value):
                raise invalid(
                    "Param text cannot have new-line/tab characters or more "
                    "than 4 consecutive spaces"
                )
            texts.append(value)
    return texts


def template_listing(templates: list[Template], name: Any) -> dict[str, Any]:
    """``GET /{waba-id}/message_templates``, filtered by ``name`` if given."""
    found = [
        {
            "name": t.name,
            "components": [{"type": "BODY", "text": t.text}],
            "language": t.language,
            "status": t.status,
            "category": t.category,
            "id": t.id,
        }
        for t in templates
        if not isinstance(name, str) or name in t.name
    ]
    return {
        "data": found,
        "paging": {"cursors": {"before": "MAZDZD", "after": "MjQZD"}},
    }
