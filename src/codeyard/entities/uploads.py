"""The upload result (spec: Upload result; reference 13): alt, url, is_image, markdown."""

from __future__ import annotations

from typing import TypedDict


class UploadResult(TypedDict):
    alt: str
    url: str
    is_image: bool
    markdown: str


def upload_result(secret: str, filename: str, is_image: bool) -> UploadResult:
    """An image reads `![name without extension](url)`, anything else `[name](url)`; `]` is escaped."""
    url = f"/uploads/{secret}/{filename}"
    alt = filename.rsplit(".", 1)[0] if is_image else filename
    label = alt.replace("]", "\\]")
    return {
        "alt": alt,
        "url": url,
        "is_image": is_image,
        "markdown": f"{'!' if is_image else ''}[{label}]({url})",
    }
