-- 002: passes per seat on the hand row (the player report counted them in
-- `moves`, a scan of the biggest table on every first visit).
-- hands.passes[s + 1] = moves of kind 'pass' by seat s in the hand; one
-- entry per seat of the match (matches.players), more if a pass came from
-- a higher seat. Existing rows are filled from `moves` here; new ones come
-- from replay.frames (the same rule).

ALTER TABLE hands ADD COLUMN passes SMALLINT[];

UPDATE hands SET passes = b.passes
FROM (
    WITH c AS (
        SELECT match, hand, list({'seat': seat, 'n': n}) AS per, max(seat) + 1 AS top
        FROM (SELECT match, hand, seat, count(*) AS n FROM moves WHERE kind = 'pass' GROUP BY ALL)
        GROUP BY ALL
    )
    SELECT h.match, h.hand,
           list_transform(
               range(greatest(coalesce(m.players, 0), coalesce(c.top, 0))),
               lambda s: coalesce(list_sum(list_transform(
                   list_filter(c.per, lambda e: e.seat = s), lambda e: e.n)), 0)
           )::SMALLINT[] AS passes
    FROM hands h
    LEFT JOIN matches m ON m.match = h.match
    LEFT JOIN c ON c.match = h.match AND c.hand = h.hand
) b
WHERE hands.match = b.match AND hands.hand = b.hand;

-- What the report needs of a seat's deal, per seat (the nested `dealt` list
-- is the costliest column to read): pips (replay.tiles.PIPS), doubles and
-- tiles dealt. New rows: replay.frames.
ALTER TABLE hands ADD COLUMN dealt_pips SMALLINT[];
ALTER TABLE hands ADD COLUMN dealt_doubles TINYINT[];
ALTER TABLE hands ADD COLUMN dealt_tiles TINYINT[];

UPDATE hands SET
    dealt_pips = list_transform(dealt, lambda d: coalesce(list_sum(list_transform(d, lambda t:
        [0, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 6, 7, 8, 9, 8, 9, 10, 10, 11, 12][t + 1])), 0)
    )::SMALLINT[],
    dealt_doubles = list_transform(dealt, lambda d: len(list_filter(d, lambda t: t IN (0, 7, 13, 18, 22, 25, 27))))::TINYINT[],
    dealt_tiles = list_transform(dealt, lambda d: len(d))::TINYINT[];
