"""Read an upload request's files and fields, turning every malformed request into one message.

Django raises several exceptions for bodies it will not parse (too many files or
fields, a broken multipart stream, a client that went away); each becomes an
`UploadRefused` with a sentence and a status, so the API answers JSON and the form
answers its page, never Django's HTML 400 or a 500.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpRequest, UnreadablePostError
from django.http.multipartparser import MultiPartParserError

MULTIPART = "multipart/form-data"


class UploadRefused(ValueError):
    """The request body cannot be read as an upload; `status` is the HTTP answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Upload:
    files: list[tuple[str, bytes]]
    name: str
    format_name: str | None
    fields: Any = field(default_factory=dict)
    """The form's fields (or the query string for a raw body): labels, set, project…"""
    mapping_file: Any = None
    """A mapping file sent as the multipart field `mapping`."""

    def field(self, name: str) -> str:
        return self.fields.get(name) or ""

    def field_list(self, name: str) -> list[str]:
        getlist = getattr(self.fields, "getlist", None)
        return getlist(name) if getlist else ([self.fields[name]] if name in self.fields else [])


def parsed_form(request: HttpRequest):
    """`(request.POST, request.FILES)` of a form body, or UploadRefused saying why not."""
    try:
        return request.POST, request.FILES
    except TooManyFilesSent:
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        raise UploadRefused(
            f"Too many files in one upload: at most {limit} (send the others as another "
            "trace, or upload them as one ZIP)."
        ) from None
    except TooManyFieldsSent:
        raise UploadRefused("Too many form fields in one upload.") from None
    except RequestDataTooBig:
        raise UploadRefused("The form fields are too large.", status=413) from None
    except (MultiPartParserError, SuspiciousOperation) as exc:
        raise UploadRefused(f"The multipart body cannot be read ({exc}).") from None
    except UnreadablePostError:
        raise UploadRefused("The request body could not be read (the upload broke off).") from None


def read_upload(request: HttpRequest) -> Upload:
    """Files of a multipart body (every `file` field), else the raw body as one file.

    Any other content type is read as the raw trace (curl's `--data-binary` labels a
    body `application/x-www-form-urlencoded` unless told otherwise).
    """
    mapping_file = None
    if request.content_type == MULTIPART:
        fields, uploaded = parsed_form(request)
        files = [(upload.name or "", upload.read()) for upload in uploaded.getlist("file")]
        mapping_file = uploaded.get("mapping")
    else:
        try:
            body = request.body
        except RequestDataTooBig:
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            raise UploadRefused(
                f"The body is over the {limit:,}-byte limit for a raw upload.", status=413
            ) from None
        except UnreadablePostError:
            raise UploadRefused("The request body could not be read.") from None
        files = [(request.GET.get("filename", ""), body)] if body else []
        fields = request.GET
    name = fields.get("name") or request.GET.get("name") or ""
    format_name = fields.get("format") or request.GET.get("format") or None
    merged = request.GET.copy()
    for key in fields:
        merged.setlist(key, fields.getlist(key))
    return Upload([(f, d) for f, d in files if d], name, format_name, merged, mapping_file)
