"""harness.importer: the importer's former path, which scripts and the conformance shim import."""

import harness.frontends.torchscript as importer
import harness.importer as alias


def test_alias_serves_every_public_name_of_the_importer():
    assert alias.__all__ == importer.__all__
    for name in importer.__all__:
        assert getattr(alias, name) is getattr(importer, name)
