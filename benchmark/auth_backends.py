"""The sign-in backend: Django's ModelBackend, but the signed-in user is loaded
together with their roles, in one statement instead of two on every request
(#26: the review queue's submit+next).

A session keeps the dotted path of the backend that signed it in, and
django.contrib.auth loads a session's user only through a backend still listed in
AUTHENTICATION_BACKENDS; so settings list this backend before ModelBackend and
keep ModelBackend too: sessions from before it go on through ModelBackend (two
reads) until their next sign-in, and nobody is signed out by the change.
"""

from django.contrib.auth.backends import ModelBackend, UserModel
from django.core.exceptions import PermissionDenied

from benchmark.roles import user_with_roles


class UserWithRolesBackend(ModelBackend):
    def get_user(self, user_id):
        # As ModelBackend: a deactivated user is no longer signed in. Django's
        # get_user still checks the session's password hash after this.
        user = user_with_roles(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None

    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username, password, **kwargs)
        if user is None and password is not None:
            if (username or kwargs.get(UserModel.USERNAME_FIELD)) is not None:
                # ModelBackend, listed after this one for old sessions, would
                # check the same password a second time (a second slow hash);
                # this ends the attempt as failed, signalled as failed, as
                # before.
                raise PermissionDenied
        return user
