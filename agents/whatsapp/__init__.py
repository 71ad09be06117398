"""The WhatsApp channel: members write to the gym's WhatsApp Business number
(Meta's Cloud API) and reach the same turn loop as the widget.

``webhook``: Meta's deliveries, signed; ``inbound``: who wrote and the turn,
run by a Celery task; ``graph``: the Graph API client; ``sending``: replies,
the 24-hour window and templates; ``statuses``: what became of each reply.
"""
