"""A real SMTP submission server for the email connector's reply tests (aiosmtpd).

Three listeners on loopback, all requiring AUTH with one test account: plain, STARTTLS
and implicit TLS. Accepted mail goes to a Maildir, with the envelope prepended as
X-Test-Envelope-* fields. Recipients whose local part starts with reject-permanent get
550, with reject-temporary 451, so tests see the server's real answers.

    python3 smtp_server.py DIR PLAIN_PORT STARTTLS_PORT TLS_PORT USER PASSWORD
"""
import mailbox
import signal
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Handler:
    def __init__(self, maildir):
        self.box = mailbox.Maildir(maildir, create=True)
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@")[0]
        if local.startswith("reject-permanent"):
            return "550 5.1.1 mailbox unavailable"
        if local.startswith("reject-temporary"):
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        head = "X-Test-Envelope-From: %s\r\nX-Test-Envelope-To: %s\r\n" % (
            envelope.mail_from, ",".join(envelope.rcpt_tos))
        with self.lock:
            self.box.add(head.encode() + envelope.original_content)
        return "250 2.0.0 accepted"


def main():
    d, plain, starttls, implicit, user, password = sys.argv[1:7]

    def auth(server, session, envelope, mechanism, data):
        ok = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == password
        return AuthResult(success=ok, handled=False)

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(d + "/cert.pem", d + "/key.pem")
    handler = Handler(d + "/maildir")
    common = dict(hostname="127.0.0.1", authenticator=auth, auth_required=True)
    servers = [
        Controller(handler, port=int(plain), auth_require_tls=False, **common),
        Controller(handler, port=int(starttls), tls_context=ctx, require_starttls=True, **common),
        Controller(handler, port=int(implicit), ssl_context=ctx, auth_require_tls=False, **common),
    ]
    for s in servers:
        s.start()
    print("ready", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    for s in servers:
        s.stop()


if __name__ == "__main__":
    main()
