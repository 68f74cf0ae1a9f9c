"""Expert verification and release of forum items (LPFQA §3.2.3): the actions,
the experts' queue screen and its form. Above construction.forum (the stages)
and construction.pipeline, which never import it."""
