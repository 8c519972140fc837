"""The expert workbench: a multi-user web app where analysts label evidence, reference answers
and judgements blind and double, with adjudication, agreement and gold export.

Needs the `workbench` extra (FastAPI, SQLAlchemy, Alembic, argon2); import submodules directly
(`assay.workbench.app.create_app`, `assay.workbench.service`, `assay.workbench.export`).
"""
