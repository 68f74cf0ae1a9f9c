"""TODO"""

from ninja import Router

router = Router()
