"""Payload codecs: raw deflate and raw LZMA2, with the cheapest chosen per payload.

Payloads carry no header of their own: the codec is recorded beside them (`Blob.codec`), so a
50-byte delta does not pay an 18-byte container. Invariant: `payload_decompress(c, p)` returns
exactly the bytes `payload_compress` was given, or raises `CodecError`.

Measured on a 100 KB prompt (bench/storage.py's generator): raw deflate level 9 ~27.1 KB,
raw LZMA2 ~24.5 KB (10% smaller) at ~1 ms to decode, so LZMA2 is offered for payloads up to
`LZMA_MAX_INPUT` and deflate beyond (LZMA2 compresses a 10 MB text in seconds, deflate in
a fraction of one).
"""

import lzma
import zlib
from collections.abc import Iterable

CODEC_NONE = "none"
CODEC_ZLIB = "zlib"
CODEC_LZMA = "lzma"

ALL_CODECS = (CODEC_NONE, CODEC_ZLIB, CODEC_LZMA)
FAST_CODECS = (CODEC_NONE, CODEC_ZLIB)

# Changing either constant changes the stored format: add a new codec name instead.
ZLIB_WBITS = -15  # raw deflate, no zlib header or checksum (integrity is the SHA-256's job)
LZMA_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 6, "dict_size": 1 << 20}]
LZMA_MAX_INPUT = 1 << 20


class CodecError(ValueError):
    """A payload does not decode with its recorded codec."""


def deflate(data: bytes, *, level: int = 9) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, ZLIB_WBITS)
    return compressor.compress(data) + compressor.flush()


def payload_compress(data: bytes, *, codecs: Iterable[str] = ALL_CODECS) -> tuple[str, bytes]:
    """The smallest encoding of `data` among `codecs`, as (codec, payload)."""
    best_codec, best = CODEC_NONE, data
    for codec in codecs:
        if codec == CODEC_ZLIB:
            candidate = deflate(data)
        elif codec == CODEC_LZMA and len(data) <= LZMA_MAX_INPUT:
            candidate = lzma.compress(data, format=lzma.FORMAT_RAW, filters=LZMA_FILTERS)
        else:
            continue
        if len(candidate) < len(best):
            best_codec, best = codec, candidate
    return best_codec, best


def payload_decompress(codec: str, payload: bytes) -> bytes:
    """Decode a payload; any failure is a `CodecError` (the caller names the blob)."""
    try:
        if codec == CODEC_NONE:
            return payload
        if codec == CODEC_ZLIB:
            inflater = zlib.decompressobj(ZLIB_WBITS)
            data = inflater.decompress(payload) + inflater.flush()
            if not inflater.eof or inflater.unused_data:
                raise CodecError("deflate stream is truncated or has trailing bytes")
            return data
        if codec == CODEC_LZMA:
            unpacker = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=LZMA_FILTERS)
            data = unpacker.decompress(payload)
            if not unpacker.eof or unpacker.unused_data:
                raise CodecError("LZMA2 stream is truncated or has trailing bytes")
            return data
    except (zlib.error, lzma.LZMAError) as exc:
        raise CodecError(f"{codec} payload does not decode: {exc}") from exc
    raise CodecError(f"unknown codec {codec!r}")
