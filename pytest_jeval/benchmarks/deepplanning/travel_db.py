"""One DeepPlanning travel case's database: the CSV tables of upstream's ``database_<lang>/id_<N>/``.

* flights, ``flights/flights.csv``: ``flight_no``, ``origin_city``, ``destination_city``, ``dep_date``,
  ``dep_datetime``, ``arr_datetime``, ``dep_station_name``, ``arr_station_name``, ``seat_class``,
  ``seat_status``, ``price``, ``route_index``, ``segment_index``, ``airline``, ``manufacturer``, ...;
* trains, ``trains/trains.csv``: the same with ``train_no`` and ``train_type``;
* hotels, ``hotels/hotels.csv``: ``name``, ``price``, ``hotel_star``, ``brand``, ``score``, ``services``;
* attractions, ``attractions/attractions.csv``: ``attraction_name``, ``city``, ``opening_time``,
  ``closing_time``, ``closing_dates``, ``min_visit_hours``, ``max_visit_hours``, ``ticket_price``,
  ``attraction_type``, ...;
* restaurants, ``restaurants/restaurants.csv``: ``restaurant_name``, ``query_latitude``,
  ``query_longitude``, ``price_per_person``, ``opening_time``, ``closing_time``, ``tags``, ...;
* locations, ``locations/locations_coords.csv``: ``poi_name``, ``latitude``, ``longitude``;
* distances, ``transportation/distance_matrix.csv``: ``origin``, ``destination`` (``lat,lon``),
  ``distance_meters``, ``duration_minutes``, ``cost``.

Every cell stays a string, as upstream reads them. A table a case lacks is empty; a malformed one is an
error naming the file.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path

from pytest_jeval.suite.dataset import DatasetLoadError

Row = dict[str, str]
TABLES = {"flights": "flights/flights.csv", "trains": "trains/trains.csv", "hotels": "hotels/hotels.csv",
          "attractions": "attractions/attractions.csv", "restaurants": "restaurants/restaurants.csv",
          "locations": "locations/locations_coords.csv", "distances": "transportation/distance_matrix.csv"}


def read_table(path: Path) -> list[Row]:
    """A CSV table (BOM allowed), every cell a stripped-of-nothing string; absent file -> no rows."""
    if not path.is_file():
        return []
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            rows = [{k: (v if v is not None else "") for k, v in row.items() if k is not None} for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetLoadError(f"deepplanning: {path} is malformed: {exc}") from None
    return rows


def _city(name: str) -> str:
    return re.sub(r"[（(].*?[)）]", "", name).strip()


@dataclasses.dataclass
class TravelDB:
    """A case's tables, with the indexes the tools and the checks use (name -> row, number -> rows)."""

    directory: Path
    tables: dict[str, list[Row]]

    @classmethod
    def load(cls, directory: Path) -> TravelDB:
        """Every table of the case's folder (read afresh: each episode gets its own copy)."""
        if not directory.is_dir():
            raise DatasetLoadError(f"deepplanning: the travel case database {directory} is missing")
        tables = {name: read_table(directory / rel) for name, rel in TABLES.items()}
        if not any(tables.values()):
            raise DatasetLoadError(f"deepplanning: {directory} holds none of the travel tables "
                                   f"({', '.join(TABLES.values())})")
        return cls(directory=directory, tables=tables)

    def _by(self, table: str, key: str) -> dict[str, Row]:
        index: dict[str, Row] = {}
        for row in self.tables[table]:
            name = row.get(key, "").strip()
            if name:
                index[name] = row  # the last row of a name wins, as upstream's index does
        return index

    @property
    def hotels(self) -> dict[str, Row]:
        """Hotels by name."""
        return self._by("hotels", "name")

    @property
    def attractions(self) -> dict[str, Row]:
        """Attractions by name."""
        return self._by("attractions", "attraction_name")

    @property
    def restaurants(self) -> dict[str, Row]:
        """Restaurants by name."""
        return self._by("restaurants", "restaurant_name")

    @property
    def locations(self) -> dict[str, Row]:
        """Places (POIs) by name."""
        return self._by("locations", "poi_name")

    def _numbers(self, table: str, key: str) -> dict[str, list[Row]]:
        index: dict[str, list[Row]] = {}
        for row in self.tables[table]:
            number = row.get(key, "").strip()
            if number:
                index.setdefault(number, []).append(row)
        return index

    @property
    def flights_by_no(self) -> dict[str, list[Row]]:
        """Flight rows by flight number."""
        return self._numbers("flights", "flight_no")

    @property
    def trains_by_no(self) -> dict[str, list[Row]]:
        """Train rows by train number."""
        return self._numbers("trains", "train_no")

    def station_city(self, station: str) -> str | None:
        """The city of an airport or station (from the case's flights and trains; else the name's first two
        Chinese characters, as upstream falls back)."""
        if not station:
            return None
        mapping_all: dict[str, str] = {}
        for table in ("flights", "trains"):
            for row in self.tables[table]:
                for name_key, city_key in (("dep_station_name", "origin_city"),
                                           ("arr_station_name", "destination_city")):
                    name, town = row.get(name_key, "").strip(), row.get(city_key, "").strip()
                    if name and town:
                        mapping_all[name] = _city(town)
        if station in mapping_all:
            return mapping_all[station]
        chinese = re.match(r"^([\u4e00-\u9fa5]{2})", station)
        return chinese.group(1) if chinese else None

    def coordinates(self, place: str) -> tuple[str, str] | None:
        """A place's ``(lat, lon)`` strings as stored (a name of the locations table, or a ``lat,lon`` text)."""
        row = self.locations.get(place)
        if row is not None:
            lat, lon = row.get("latitude", "").strip(), row.get("longitude", "").strip()
            try:
                float(lat), float(lon)
                return lat, lon
            except ValueError:
                pass
        found = re.match(r"\s*([\-0-9.]+)\s*,\s*([\-0-9.]+)\s*$", place)
        if found:
            try:
                return str(float(found.group(1))), str(float(found.group(2)))
            except ValueError:
                return None
        return None

    def route(self, origin: str, destination: str) -> Row | None:
        """The distance-matrix row from one ``lat,lon`` to another."""
        for row in self.tables["distances"]:
            if row.get("origin") == origin and row.get("destination") == destination:
                return row
        return None

    def taxi_minutes(self, start: str, end: str) -> float | None:
        """Minutes by road between two places (by name or ``lat,lon``), or None when unknown."""
        a, b = self.coordinates(start), self.coordinates(end)
        if a is None or b is None:
            return None
        row = self.route(f"{a[0]},{a[1]}", f"{b[0]},{b[1]}")
        try:
            return float(row["duration_minutes"]) if row is not None else None
        except (KeyError, ValueError):
            return None
