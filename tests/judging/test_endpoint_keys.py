import pytest
from django.core.exceptions import ValidationError

from judging.llm.actions import check_endpoint
from judging.llm.gateway import api_key_env_allowed


@pytest.mark.smoke
@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "REDIS_URL", "PATH"])
def test_server_secrets_cannot_be_named_as_an_endpoint_key(name):
    assert not api_key_env_allowed(name)
    with pytest.raises(ValidationError, match="not an allowed key variable"):
        check_endpoint({"api_key_env": name})


@pytest.mark.smoke
@pytest.mark.parametrize(
    "name", ["OPENAI_API_KEY", "DASHSCOPE_API_KEY", "STUB_API_KEY"]
)
def test_provider_key_variables_are_allowed(name):
    assert api_key_env_allowed(name)
    check_endpoint({"api_key_env": name})
