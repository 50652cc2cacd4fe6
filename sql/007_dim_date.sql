-- dim_date: one row per calendar day from 2000-01-01 to 2100-12-31, for BI tools to join on a
-- report's day (bi_<name>.day = dim_date.date) and group by ISO week, month, quarter or weekday
-- without each dashboard re-deriving them. ISO weeks start on Monday; week 1 holds the year's
-- first Thursday, so the first days of January can belong to the previous ISO year (iso_year).
-- Names are unqualified: the migration runner sets search_path to the configured schema.

CREATE TABLE dim_date (
  date          date PRIMARY KEY,
  year          smallint NOT NULL,
  quarter       smallint NOT NULL CHECK (quarter BETWEEN 1 AND 4),
  month         smallint NOT NULL CHECK (month BETWEEN 1 AND 12),
  month_name    text NOT NULL,
  day_of_month  smallint NOT NULL,
  iso_year      smallint NOT NULL,
  iso_week      smallint NOT NULL CHECK (iso_week BETWEEN 1 AND 53),
  iso_weekday   smallint NOT NULL CHECK (iso_weekday BETWEEN 1 AND 7),
  weekday_name  text NOT NULL,
  is_weekend    boolean NOT NULL,
  week_start    date NOT NULL,
  month_start   date NOT NULL,
  quarter_start date NOT NULL,
  year_month    text NOT NULL,
  iso_year_week text NOT NULL
);

-- Names come from arrays, not to_char's TMMonth/TMDay, so they do not depend on lc_time.
INSERT INTO dim_date
SELECT d,
       extract(year FROM d)::smallint,
       extract(quarter FROM d)::smallint,
       extract(month FROM d)::smallint,
       (ARRAY['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September',
              'October', 'November', 'December'])[extract(month FROM d)::int],
       extract(day FROM d)::smallint,
       extract(isoyear FROM d)::smallint,
       extract(week FROM d)::smallint,
       extract(isodow FROM d)::smallint,
       (ARRAY['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'])[extract(isodow FROM d)::int],
       extract(isodow FROM d) >= 6,
       date_trunc('week', d)::date,
       date_trunc('month', d)::date,
       date_trunc('quarter', d)::date,
       to_char(d, 'YYYY-MM'),
       to_char(d, 'IYYY-"W"IW')
  FROM generate_series(date '2000-01-01', date '2100-12-31', interval '1 day') AS g(t),
       LATERAL (SELECT g.t::date AS d) AS day;

COMMENT ON TABLE dim_date IS 'One row per day 2000-01-01..2100-12-31: join bi_<name>.day = dim_date.date to group by ISO week, month, quarter or weekday.';
COMMENT ON COLUMN dim_date.iso_year IS 'ISO 8601 week-numbering year: early January days may belong to the previous one, late December days to the next.';
COMMENT ON COLUMN dim_date.iso_weekday IS '1 = Monday .. 7 = Sunday.';
COMMENT ON COLUMN dim_date.week_start IS 'Monday of the ISO week.';
COMMENT ON COLUMN dim_date.iso_year_week IS 'e.g. 2026-W01; sorts in calendar order.';
