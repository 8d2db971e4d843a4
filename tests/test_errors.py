import pytest

from executors.core import errors
from executors.core.errors import ErrorKind, FerrumError


def test_every_kind_has_a_class_with_a_matching_kind():
    for kind in ErrorKind:
        err = errors.error_for(kind, "what happened", "what to do")
        assert isinstance(err, FerrumError)
        assert err.kind is kind
        assert str(err) == "what happened (what to do)"


@pytest.mark.parametrize("cls, builtin", [
    (errors.InvalidFormatError, ValueError),
    (errors.InvalidParameterError, ValueError),
    (errors.NotFoundError, LookupError),
    (errors.IOError_, OSError),
    (errors.TimeoutError_, TimeoutError),
    (errors.UnsupportedError, NotImplementedError),
    (errors.ResourceExhaustedError, MemoryError),
])
def test_subclasses_also_derive_from_the_matching_builtin(cls, builtin):
    with pytest.raises(builtin):
        raise cls("boom")


def test_classification():
    assert errors.TimeoutError_("slow").is_retryable()
    assert not errors.InvalidFormatError("bad").is_retryable()
    assert errors.InvalidFormatError("bad").is_client_error()
    assert not errors.InvalidFormatError("bad").is_server_error()
    assert errors.BackendError("gpu fell over").is_server_error()
    assert errors.Cancelled("stopped").is_client_error()


def test_wrap_unexpected_keeps_ferrum_errors_and_explains_others():
    original = errors.ModelError("m")
    assert errors.wrap_unexpected(original, "loading") is original
    wrapped = errors.wrap_unexpected(KeyError("x"), "reading the config")
    assert isinstance(wrapped, errors.InternalError)
    assert "reading the config" in str(wrapped) and wrapped.hint
    assert isinstance(errors.wrap_unexpected(FileNotFoundError(2, "nope", "a.wav"), "opening"), errors.NotFoundError)
    assert errors.ModelError("m", "h").to_dict() == {"kind": "Model", "message": "m", "hint": "h"}
