"""Cancel and resume, the controls every run page offers, for every run kind.

Each kind's app hands its two actions over in `ready()` (`register_controls`):
the kinds' apps sit above `judging.runs`, which never imports them. One view
(`views.run_control`) serves them all under one URL style,
`runs/<kind>/<pk>/cancel/` and `runs/<kind>/<pk>/resume/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from judging.runs.models import Run

ACTIONS = ("cancel", "resume")


@dataclass(frozen=True)
class Controls:
    # Each locks the run, refuses with a ValidationError what it may not do (a
    # finished run cancelled, a running one resumed) and writes under its lock.
    cancel: Callable[[Run], object]
    resume: Callable[[Run], object]


CONTROLS: dict[str, Controls] = {}


def register_controls(kind_name: str, *, cancel, resume) -> None:
    CONTROLS[kind_name] = Controls(cancel=cancel, resume=resume)


def control(kind_name: str, action: str) -> Callable[[Run], object] | None:
    controls = CONTROLS.get(kind_name)
    if controls is None or action not in ACTIONS:
        return None
    return getattr(controls, action)
