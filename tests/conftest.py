"""One place creates the test context (Mesa llvmpipe through EGL on machines with no GPU).
Every test checks that it left no GL error behind."""
import numpy as np
import pytest

import hydro


@pytest.fixture(scope="session")
def ctx():
    context = hydro.create_context()
    yield context
    context.release()


@pytest.fixture(autouse=True)
def _no_gl_errors(request):
    if "ctx" not in request.fixturenames:
        yield
        return
    context = request.getfixturevalue("ctx")
    with context:              # current for this test, whatever window another test left current
        assert context.error == "GL_NO_ERROR", "a GL error was pending before the test"
        yield
        assert context.error == "GL_NO_ERROR", "the test left a GL error"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
