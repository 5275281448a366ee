"""The auditor's certificate of a period (docs/certificate.md).

``build`` computes its figures from the store, ``lines`` and ``merkle`` the
proof that every hand of the period is in it, ``identity`` the software
that made it, ``power`` what its number of deals could have caught,
``render`` its HTML and PDF, ``keys`` the desk's signature, ``issue`` its
files, and ``verify`` checks one against its signature, the store or the
logs.
"""
