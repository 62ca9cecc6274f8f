"""Room codes, host secrets and student ids: drawn with `secrets`, checked at the door.

A room code is 6 symbols from an alphabet without look-alikes (no 0/O, 1/I/L), so it can be
read off a projector and typed on a phone; a host secret is 192 random bits
(``secrets.token_urlsafe(24)``), of which the store keeps only the SHA-256; a student id is
128 random bits, made once per browser session and never tied to a person.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from xattn._checks import check_int, quote
from xattn.classroom.errors import RoomNotFound
from xattn.classroom.said import said

__all__ = ["ALPHABET", "CODE_LENGTH", "new_code", "new_secret", "new_student_id",
           "signed_student", "student_of", "new_challenge", "work_done", "solve_work",
           "joined_student",
           "secret_digest", "normalize_code", "check_student",
           "check_step", "DEVICE_CODE_LENGTH", "new_device_code", "normalize_device_code",
           "device_digest", "wrap_secret", "unwrap_secret"]

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"   # no 0/O, 1/I/L: 31 symbols, 31**6 ~ 8.9e8 codes
CODE_LENGTH = 6
DEVICE_CODE_LENGTH = 8      # 31**8 ~ 8.5e11 one-time codes, each alive for minutes


def new_secret() -> str:
    """A fresh host secret (32 URL-safe characters)."""
    return secrets.token_urlsafe(24)


def new_code() -> str:
    """A fresh room code: 6 symbols of `ALPHABET` drawn with `secrets`."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def new_student_id() -> str:
    """A student's random id for one browser session (22 URL-safe characters, no personal data)."""
    return secrets.token_urlsafe(16)


def signed_student(key: bytes, student: str, code: str) -> str:
    """A student id of room ``code`` with its signature (``id.mac``): what a browser keeps in
    that room's cookie, so that only ids this store's servers issued for this room are taken
    back (`student_of`): a cookie of one class counts in no other.

    Examples
    --------
    >>> value = signed_student(b"k" * 32, "s0123456789abcdefghijk", "HJK23M")
    >>> student_of(b"k" * 32, value, "HJK23M")
    's0123456789abcdefghijk'
    >>> student_of(b"k" * 32, value, "ABCDEF") is None          # another room's
    True
    >>> student_of(b"k" * 32, "s0123456789abcdefghijk." + "0" * 32, "HJK23M") is None
    True
    """
    mac = hmac.new(key, f"xattn student|{code}|{student}".encode(), hashlib.sha256).hexdigest()
    return f"{student}.{mac[:32]}"


def student_of(keys, value, code: str) -> str | None:
    """The student id in a signed value of room ``code`` (`signed_student`) under one of
    ``keys`` (a key, or several: every key the servers signed with), or None."""
    if not isinstance(value, str) or value.count(".") != 1 or len(value) > 100:
        return None
    student = value.split(".")[0]
    try:
        check_student(student)
    except ValueError:
        return None
    for key in [keys] if isinstance(keys, bytes) else keys:
        if hmac.compare_digest(signed_student(key, student, code), value):
            return student
    return None


# --- joining a room: a small proof of work ------------------------------------------------------

def new_challenge(key: bytes, code: str, now: float) -> str:
    """A join's challenge for room ``code`` (``time.random.mac``): the phone's page finds a
    nonce for it (`work_done`) before the server gives it a student id (`joined_student`)."""
    stamp, nonce = str(int(now)), secrets.token_urlsafe(12)
    mac = hmac.new(key, f"xattn challenge|{code}|{stamp}|{nonce}".encode(),
                   hashlib.sha256).hexdigest()[:32]
    return f"{stamp}.{nonce}.{mac}"


def work_done(challenge: str, nonce: str, bits: int, pieces: int = 1) -> bool:
    """Whether ``nonce`` (``pieces`` numbers, comma-separated) does a join's work: for each
    piece ``i``, SHA-256 of ``challenge.i.n_i`` starts with ``bits`` zero bits (about
    ``pieces * 2**bits`` hashes to find: the phone's page does it in JavaScript,
    xattn/server/assets/work.js). Several small pieces instead of one large one make the
    time it takes vary little: a phone's unlucky draw is not a long wait.

    Examples
    --------
    >>> work_done("c", "0", 0)
    True
    >>> solve_work("c", 8, 2)
    '282,180'
    >>> [work_done("c", nonce, 8, 2) for nonce in ("282,180", "282", "180,282")]
    [True, False, False]
    """
    parts = nonce.split(",") if isinstance(nonce, str) else []
    if len(parts) != pieces or not all(p.isdigit() and len(p) <= 12 for p in parts):
        return False
    for i, n in enumerate(parts):
        text = challenge if pieces == 1 else f"{challenge}.{i}"
        digest = hashlib.sha256(f"{text}.{n}".encode()).digest()
        if bits and int.from_bytes(digest, "big") >> (256 - bits):
            return False
    return True


def solve_work(challenge: str, bits: int, pieces: int = 1) -> str:
    """A nonce for ``challenge`` (`work_done`), as the phone's page finds it (each piece the
    first number that does, counting from 0): for tests and load generators, which play
    phones without a browser.

    Examples
    --------
    >>> solve_work("c", 8)
    '329'
    """
    found = []
    for i in range(pieces):
        text = challenge if pieces == 1 else f"{challenge}.{i}"
        n = 0
        while not work_done(text, str(n), bits):
            n += 1
        found.append(str(n))
    return ",".join(found)


def joined_student(keys, code: str, challenge, nonce, bits: int, pieces: int, now: float,
                   max_age: float) -> str | None:
    """The student id a solved challenge of room ``code`` gives (the same id for the same
    challenge, so a solution sent twice is one student), or None: not this room's, older than
    ``max_age`` seconds, or the work not done."""
    if not (isinstance(challenge, str) and isinstance(nonce, str) and len(challenge) < 120
            and 0 < len(nonce) <= 13 * pieces and challenge.count(".") == 2):
        return None
    stamp, rand, mac = challenge.split(".")
    if not stamp.isdigit() or not 0 <= now - int(stamp) <= max_age:
        return None
    text = f"xattn challenge|{code}|{stamp}|{rand}".encode()
    if not any(hmac.compare_digest(hmac.new(k, text, hashlib.sha256).hexdigest()[:32], mac)
               for k in ([keys] if isinstance(keys, bytes) else keys)):
        return None
    if not work_done(challenge, nonce, bits, pieces):
        return None
    digest = hashlib.sha256(f"xattn joined|{code}|{challenge}".encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:22]


def secret_digest(secret: str) -> str:
    """The hex SHA-256 the store keeps instead of the secret."""
    # The secret has 192 random bits, so one SHA-256 suffices (no slow KDF as for a password).
    return hashlib.sha256(secret.encode()).hexdigest()


def normalize_code(text) -> str:
    """A room code as typed ("abc def", "ABC-DEF") in its stored form, or `RoomNotFound`.

    Examples
    --------
    >>> normalize_code(" hjk-23m ")
    'HJK23M'
    """
    if not isinstance(text, str):
        raise TypeError(f"a room code must be a str; received {type(text).__name__}.")
    code = "".join(text.split()).replace("-", "").upper()
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        raise RoomNotFound(f"{quote(text, 30)} is not a room code: a room code is "
                           f"{CODE_LENGTH} characters from {ALPHABET}.").saying(
            said("why.not.code.typed", code=quote(text, 30)))
    return code


def new_device_code() -> str:
    """A fresh one-time device code: 8 symbols of `ALPHABET` (typed as ``ABCD-EFGH``)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(DEVICE_CODE_LENGTH))


def normalize_device_code(text) -> str | None:
    """A device code as typed ("abcd-efgh") in its stored form, or None if it cannot be one.

    Examples
    --------
    >>> normalize_device_code(" hjkm-2345 ")
    'HJKM2345'
    >>> normalize_device_code("HJKM") is None
    True
    """
    if not isinstance(text, str) or len(text) > 40:
        return None
    code = "".join(text.split()).replace("-", "").upper()
    ok = len(code) == DEVICE_CODE_LENGTH and all(c in ALPHABET for c in code)
    return code if ok else None


def device_digest(code: str, device_code: str) -> str:
    """What the store keeps of room ``code``'s one-time ``device_code``."""
    return hashlib.sha256(f"xattn device|{code}|{device_code}".encode()).hexdigest()


def _stream(code: str, device_code: str, n: int) -> bytes:
    return hashlib.shake_256(f"xattn wrap|{code}|{device_code}".encode()).digest(n)


def wrap_secret(secret: str, code: str, device_code: str) -> str:
    """``secret`` (ASCII) XOR a key stream drawn from the device code, as hex: the store holds
    a host secret only so wrapped, only while its device code lives (minutes), and never the
    device code itself (`unwrap_secret` undoes it).

    Examples
    --------
    >>> wrapped = wrap_secret("s3cret", "HJK23M", "ABCDEFGH")
    >>> wrapped != "s3cret" and unwrap_secret(wrapped, "HJK23M", "ABCDEFGH")
    's3cret'
    """
    data = secret.encode("ascii")
    return bytes(a ^ b for a, b in zip(data, _stream(code, device_code, len(data)),
                                       strict=True)).hex()


def unwrap_secret(wrapped: str, code: str, device_code: str) -> str | None:
    """The secret `wrap_secret` wrapped, or None if ``wrapped`` is not one."""
    try:
        data = bytes.fromhex(wrapped)
        return bytes(a ^ b for a, b in zip(data, _stream(code, device_code, len(data)),
                                           strict=True)).decode("ascii")
    except (ValueError, TypeError):
        return None


def check_student(student_id) -> str:
    if not isinstance(student_id, str):
        raise TypeError(f"student_id must be a str; received {type(student_id).__name__}.")
    if not 8 <= len(student_id) <= 64 or not student_id.isascii() \
            or not student_id.replace("-", "").replace("_", "").isalnum():
        raise ValueError("student_id must be 8 to 64 URL-safe characters (new_student_id()); "
                         f"received {quote(student_id)}.")
    return student_id


def check_step(step) -> int:
    return check_int(step, "step", minimum=1)
