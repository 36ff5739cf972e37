"""AWS Signature Version 4 for one HTTP request, stdlib only (hmac, hashlib).

What botocore's ``SigV4Auth`` does for a JSON POST to a non-S3 service: the canonical request (method, the
path URI-encoded once more, the sorted query, the signed headers, the payload's SHA-256), the string to sign
over the credential scope ``date/region/service/aws4_request``, and the signing key derived from the secret
(https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html). The signature is bound to
``X-Amz-Date``, so a request is signed right before it is sent.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import parse_qsl, quote, urlsplit

__all__ = ["AwsCredentials", "sign"]

_UNSIGNED = frozenset({"expect", "user-agent", "x-amzn-trace-id"})
"""Headers botocore leaves unsigned (``SIGNED_HEADERS_BLACKLIST``): proxies may change them."""


@dataclass(frozen=True)
class AwsCredentials:
    access_key_id: str
    secret_access_key: str
    session_token: str | None = None

    def __repr__(self) -> str:  # never print the secret (ERR-07)
        return f"AwsCredentials(access_key_id={self.access_key_id!r}, secret_access_key='***')"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def sign(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes,
    credentials: AwsCredentials,
    region: str,
    service: str = "bedrock",
    now: datetime | None = None,
) -> dict[str, str]:
    """The headers to add to the request: ``X-Amz-Date``, ``Authorization`` and, for temporary credentials,
    ``X-Amz-Security-Token``. Every header in ``headers`` is signed, as botocore does, so those must be sent
    unchanged; Host is taken from ``url``."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    amz_date = moment.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    parts = urlsplit(url)
    added = {"x-amz-date": amz_date}
    if credentials.session_token:
        added["x-amz-security-token"] = credentials.session_token
    signed = {k.lower(): " ".join(v.strip().split()) for k, v in headers.items()}
    signed.update(added)
    signed["host"] = parts.netloc
    names = sorted(n for n in signed if n not in _UNSIGNED)
    canonical_headers = "".join(f"{n}:{signed[n]}\n" for n in names)
    query = "&".join(
        f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(parse_qsl(parts.query, True))
    )
    canonical_request = "\n".join(
        [
            method.upper(),
            quote(parts.path or "/", safe="/~"),  # the path's escapes escaped once more (non-S3 services)
            query,
            canonical_headers,
            ";".join(names),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()]
    )
    key = _hmac(("AWS4" + credentials.secret_access_key).encode(), day)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    added["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return added
