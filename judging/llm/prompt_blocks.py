"""Prompt text that several templates share, in one place."""

# The item and the reply format every translation prompt ends with. `options`,
# `key_points` and `reply_format` are judging.translation.parts' blocks: empty for
# an open item, whose prompt then reads exactly as before they were carried.
TRANSLATION_ITEM = """\
Question:
{{question}}
{{options}}
Reference answer:
{{answer}}
{{key_points}}
Reply with only a JSON object: {{reply_format}}"""
