"""A stand-in for the user's browser during a sign-in, for $BROWSER: it opens the authorization page and
follows its redirects, as a browser would after the user approved, until the redirect reaches appsdk's
loopback callback. Each URL it was asked to open is appended to $SCRIPTED_BROWSER_LOG when that is set."""

import os
import sys
import urllib.request

url = sys.argv[1]
if os.environ.get("SCRIPTED_BROWSER_LOG"):
    with open(os.environ["SCRIPTED_BROWSER_LOG"], "a", encoding="utf-8") as log:
        log.write(url + "\n")
urllib.request.urlopen(url, timeout=30).read()
