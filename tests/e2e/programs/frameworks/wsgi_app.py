"""A Flask view that stops at a breakpoint, served by gunicorn's sync or gthread worker, and one
that raises (Flask answers it with a 500)."""
import flask

app = flask.Flask(__name__)


@app.route("/score/<int:rows>")
def score(rows):
    total = sum(range(rows))
    breakpoint()
    return "score %d\n" % total


@app.route("/ratio/<int:rows>")
def ratio(rows):
    total = sum(range(rows))
    return "ratio %d\n" % (total // (rows - rows))  # line: divide
