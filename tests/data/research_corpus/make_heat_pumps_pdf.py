"""Write docs/heat-pumps.pdf: a one-page PDF 1.4 (Helvetica, uncompressed), byte by byte, for the corpus tests.

Run from this folder: ``python make_heat_pumps_pdf.py``. The output is deterministic.
"""

from __future__ import annotations

from pathlib import Path

LINES = [
    "Heat pumps in cold climates",
    "Air-source heat pumps keep a coefficient of performance (COP) above 2",
    "down to about -15 degrees Celsius in recent field trials in Norway and Canada.",
    "Below that, output falls and backup resistance heating takes over.",
    "Ground-source heat pumps keep a COP near 3.5 all winter.",
]


def pdf(lines: list[str]) -> bytes:
    ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    for i, line in enumerate(lines):
        text = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"({text}) Tj" if i == 0 else f"T* ({text}) Tj")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Title (Heat pumps in cold climates) /Producer (pytest-jeval test data) >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode() + b"0000000000 65535 f \n"
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


if __name__ == "__main__":
    Path("docs/heat-pumps.pdf").write_bytes(pdf(LINES))
