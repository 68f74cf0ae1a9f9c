"""Who graded, as another tool names them, resolved to Assay users.

Label Studio's UI export names an annotator by a number (its own user id) and its
import accepts an annotation only from an e-mail address it knows; Argilla names
users by UUID. So every annotator key read from a file is resolved, in order,
through the mapping the person importing gave (key → Assay username or e-mail),
then as an Assay username, an e-mail address held by exactly one user, or one of
the stable synthetic identities Assay's exports give each user
(`synthetic_email`, `synthetic_uuid`). Keys left over are shown on the import
page's mapping step, never guessed.
"""

import hashlib
import json
import re
import uuid

from django.contrib.auth import get_user_model
from django.utils.translation import gettext as _

from benchmark.validation import Problems

SYNTHETIC_DOMAIN = "assay.invalid"
# Fixed forever: an Argilla dataset exported today and read back next year must name
# the same user by the same UUID.
ARGILLA_NAMESPACE = uuid.UUID("6f3a1c52-9d4e-5b7a-8c21-3e5f7a9b0d14")
LABEL_STUDIO_PREFIX = "label-studio-user:"
# What an address's local part may be (dot-atoms of the letters Label Studio's
# e-mail validation takes): no leading, trailing or doubled dot.
EMAIL_SAFE = re.compile(r"^[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)*$")


def synthetic_email(username: str) -> str:
    """An address no mail server answers (.invalid is reserved) that stands for one
    Assay user in Label Studio; the username itself where an address can hold it."""
    if EMAIL_SAFE.match(username):
        return f"{username}@{SYNTHETIC_DOMAIN}"
    digest = hashlib.sha256(username.encode()).hexdigest()[:16]
    return f"user-{digest}@{SYNTHETIC_DOMAIN}"


def synthetic_uuid(username: str) -> str:
    return str(uuid.uuid5(ARGILLA_NAMESPACE, username))


def label_studio_key(user_id: int) -> str:
    return f"{LABEL_STUDIO_PREFIX}{user_id}"


def describe(key: str) -> str:
    """How the mapping step names a key a person has to map."""
    if key.startswith(LABEL_STUDIO_PREFIX):
        return _("Label Studio user %(id)s") % {"id": key[len(LABEL_STUDIO_PREFIX) :]}
    return key


def read_label_studio_users(data: bytes, problems: Problems) -> dict[str, str]:
    """{annotator key: e-mail address} from Label Studio's users list (the JSON of
    GET /api/users/: objects with `id` and `email`)."""
    try:
        users = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        problems.add(0, "users file", _("expected Label Studio's users list as JSON"))
        return {}
    if isinstance(users, dict) and isinstance(users.get("results"), list):
        users = users["results"]  # the paginated form of the same list
    if not isinstance(users, list):
        problems.add(0, "users file", _("expected a JSON array of users"))
        return {}
    found = {}
    for number, user in enumerate(users, start=1):
        user_id = user.get("id") if isinstance(user, dict) else None
        email = user.get("email") if isinstance(user, dict) else None
        if not isinstance(user_id, int) or isinstance(user_id, bool):
            problems.add(number, "users file: id", _("expected Label Studio's user id"))
        elif not isinstance(email, str) or not email:
            problems.add(number, "users file: email", _("expected an e-mail address"))
        else:
            found[label_studio_key(user_id)] = email
    return found


def _synthetic_owners(keys: set[str]) -> dict[str, object]:
    """Users whose synthetic e-mail or UUID is among `keys`."""
    wanted = {
        key for key in keys if key.endswith(f"@{SYNTHETIC_DOMAIN}") or _is_uuid(key)
    }
    if not wanted:
        return {}
    found = {}
    for user in get_user_model().objects.all():
        username = user.get_username()
        for key in (synthetic_email(username), synthetic_uuid(username)):
            if key in wanted:
                found[key] = user
    return found


def _is_uuid(key: str) -> bool:
    try:
        uuid.UUID(key)
    except ValueError:
        return False
    return True


def resolve(keys: set[str], mapping: dict[str, str]) -> dict[str, object]:
    """{key: Assay user} for every key that names one; keys naming nobody are left
    out."""
    model = get_user_model()
    targets = {key: mapping.get(key, key) for key in keys}
    names = set(targets.values())
    by_name = {
        user.get_username(): user
        for user in model.objects.filter(**{f"{model.USERNAME_FIELD}__in": names})
    }
    by_email: dict[str, list] = {}
    for user in model.objects.filter(email__in=names - set(by_name)):
        by_email.setdefault(user.email, []).append(user)
    by_name |= {email: users[0] for email, users in by_email.items() if len(users) == 1}
    by_name |= _synthetic_owners(names - set(by_name))
    return {
        key: by_name[target] for key, target in targets.items() if target in by_name
    }
