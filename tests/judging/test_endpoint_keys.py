"""Every path that saves an endpoint checks its key variable and base URL
(Endpoint.clean): the form, the admin, commands."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judging.llm.models import Endpoint, api_key_env_allowed


def endpoint(**fields):
    return Endpoint(
        name="probe",
        model="m",
        **{
            "base_url": "https://api.example.com/v1",
            "api_key_env": "X_API_KEY",
            **fields,
        },
    )


@pytest.mark.smoke
@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "REDIS_URL", "PATH"])
def test_server_secrets_cannot_be_named_as_an_endpoint_key(name):
    assert not api_key_env_allowed(name)
    with pytest.raises(ValidationError, match="not an allowed key variable"):
        endpoint(api_key_env=name).clean()


@pytest.mark.smoke
@pytest.mark.parametrize(
    "name", ["OPENAI_API_KEY", "DASHSCOPE_API_KEY", "STUB_API_KEY"]
)
def test_provider_key_variables_are_allowed(name):
    assert api_key_env_allowed(name)
    endpoint(api_key_env=name).clean()


@pytest.mark.smoke
@pytest.mark.parametrize(
    "url", ["ftp://api.example.com/v1", "file:///etc/passwd", "gopher://x", "http://"]
)
def test_only_http_base_urls(url):
    with pytest.raises(ValidationError, match="http:// or https://"):
        endpoint(base_url=url).clean()


@pytest.mark.smoke
def test_provider_hosts_can_be_restricted(settings):
    settings.LLM_ENDPOINT_HOSTS = ["api.openai.com", ".dashscope.aliyuncs.com"]
    endpoint(base_url="https://api.openai.com/v1").clean()
    endpoint(base_url="https://intl.dashscope.aliyuncs.com/v1").clean()
    with pytest.raises(ValidationError, match="169.254.169.254 is not an allowed"):
        endpoint(base_url="http://169.254.169.254/latest").clean()


def test_the_admin_refuses_what_the_form_refuses(admin_client):
    response = admin_client.post(
        reverse("admin:judging_endpoint_add"),
        {
            "name": "leaky",
            "base_url": "https://api.example.com/v1",
            "model": "m",
            "api_key_env": "SECRET_KEY",
            "extra_body": "{}",
            "max_concurrency": "8",
        },
    )
    assert response.status_code == 200
    assert "not an allowed key variable" in response.content.decode()
    assert not Endpoint.objects.exists()


def test_the_endpoint_page_shows_the_problem_beside_the_field(client_for):
    response = client_for("manager").post(
        reverse("judging:endpoints"),
        {
            "name": "leaky",
            "base_url": "ftp://api.example.com/v1",
            "model": "m",
            "api_key_env": "DATABASE_URL",
            "extra_body": "{}",
            "max_concurrency": "8",
        },
    )
    form = response.context["form"]
    assert "not an allowed key variable" in " ".join(form.errors["api_key_env"])
    assert "http:// or https://" in " ".join(form.errors["base_url"])
    assert not Endpoint.objects.exists()
