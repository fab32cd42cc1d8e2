"""A Django project in one file, with a view that raises (Django answers it with a 500):
`python django_app.py runserver --noreload PORT`."""
import sys

from django.conf import settings
from django.core.management import execute_from_command_line
from django.http import HttpResponse
from django.urls import path

settings.configure(DEBUG=False, ALLOWED_HOSTS=["127.0.0.1"], ROOT_URLCONF=__name__,
                   SECRET_KEY="a key for a test server only")


def ratio(request, rows):
    total = sum(range(rows))
    return HttpResponse("ratio %d\n" % (total // (rows - rows)))  # line: divide


urlpatterns = [path("ratio/<int:rows>", ratio)]

if __name__ == "__main__":
    execute_from_command_line(sys.argv)
