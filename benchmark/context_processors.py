from benchmark.roles import Role, user_roles


def roles(request):
    held = user_roles(request.user) if hasattr(request, "user") else set()
    return {
        "user_roles": held,
        "is_manager": Role.MANAGER in held,
    }
