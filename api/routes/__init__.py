"""The app's routes, one `APIRouter` per resource (`api.app.create_app` includes them)."""
