-- Run once by the postgres image when its volume is first made (/docker-entrypoint-initdb.d): the
-- login of the read-only role Grafana reads the warehouse with. Its privileges are given by
-- `adops migrate --bi-role adops_bi` (the compose migrate service), which grants exactly the bi_
-- views, dim_date and the catalogue. On an existing volume run this statement yourself. Change the
-- password (and ADOPS_BI_PASSWORD of the grafana service) for anything but a local setup.
CREATE ROLE adops_bi LOGIN PASSWORD 'adops_bi';
