"""A Flask view that stops at a breakpoint, served by gunicorn's sync or gthread worker."""
import flask

app = flask.Flask(__name__)


@app.route("/score/<int:rows>")
def score(rows):
    total = sum(range(rows))
    breakpoint()
    return "score %d\n" % total
