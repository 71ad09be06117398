"""Where Gymnasia may send a request: addresses on the public internet only.

An address someone else chose (a Stripe API base, a gym's webhook endpoint) must
not lead Gymnasia to the machines beside it: loopback, private networks, the
cloud's link-local metadata service. A name is judged by every address it
resolves to, and an IPv6 address by the IPv4 address it may carry inside
(``::ffff:10.0.0.1``, 6to4, NAT64, Teredo).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def address_public(address: str) -> bool:
    """Whether one IP address is on the public internet (unicast, global), and
    so is any IPv4 address carried inside it."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    inside: list[ipaddress.IPv4Address | None] = []
    if isinstance(ip, ipaddress.IPv6Address):
        inside = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
        if ip in NAT64:
            inside.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return (
        ip.is_global
        and not ip.is_multicast
        and all(v4.is_global and not v4.is_multicast for v4 in inside if v4)
    )


def host_addresses(host: str, port: int | None = None) -> list[str]:
    """The addresses a host name (or IP literal) resolves to, in the resolver's
    order of preference, without repeats. Raises ``OSError`` when it resolves
    to nothing."""
    found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(entry[4][0]) for entry in found))


def destination_allowed(base_url: str, allowed: list[str]) -> bool:
    """Whether credentials may be sent to this API address: one the operator
    lists, whose name does not resolve to a private, loopback or link-local
    address (an address listed as a number is taken as the operator wrote it)."""
    if base_url.rstrip("/") not in allowed:
        return False
    host = urlsplit(base_url).hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return True
    try:
        found = host_addresses(host)
    except OSError:
        return True  # nothing resolves: the connection is refused as usual
    return all(address_public(address) for address in found)
