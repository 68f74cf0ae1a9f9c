"""Signing in as the login form does: django-axes counts failures per username and
address, so `authenticate` needs the request."""

from django.test import RequestFactory


def sign_in_request():
    return RequestFactory().post("/login/")
