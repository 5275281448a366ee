"""The C accelerator (replay/_native.c, _deal.c, _scan.c, _hand.c, _match.c, _maker.c, _solve.c and _belief.c); everything else is in pyproject.toml.

Optional: where it cannot be compiled, the package installs without it and
runs on its pure-Python path (same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "replay._native",
            [
                "replay/_native.c",
                "replay/_deal.c",
                "replay/_scan.c",
                "replay/_hand.c",
                "replay/_match.c",
                "replay/_maker.c",
                "replay/_solve.c",
                "replay/_belief.c",
            ],
            depends=["replay/_rules.h", "replay/_hand.h", "replay/_native.h"],
            optional=True,
            # -O3 (Python's own level; -O2 before 2026-12-05): the solver 2-4% faster
            # on the same searches (docs/analysis.md, "Tried and left out")
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wno-unused-function"],
        )
    ]
)
