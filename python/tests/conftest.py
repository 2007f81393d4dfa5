import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


@pytest.fixture
def models():
    return MODELS
