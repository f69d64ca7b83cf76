"""The outline's rule for naming a group by its members, shared by the topic namers."""

from compendium.titles import TOPIC_HEADING_SHARE, title_from_members

CENTRAL = ["VACUUM", "autovacuum", "visibility map", "FREEZE"]


def test_the_heading_over_half_the_members_names_the_group_without_its_numbering():
    headings = [("Chapter 25. Routine Database Maintenance Tasks", 2), ("25.1.5. Wraparound", 1)]
    assert title_from_members(headings, CENTRAL, 4) == "Routine Database Maintenance Tasks"


def test_a_heading_over_fewer_than_half_gives_way_to_the_most_central_member():
    assert title_from_members([("Parallel Query", 1)], CENTRAL, 4) == "VACUUM"
    assert title_from_members([], CENTRAL, 4) == "VACUUM"


def test_a_pair_of_member_names_or_a_part_heading_is_never_the_title():
    headings = [("VACUUM and autovacuum", 4), ("Overview", 4), ("Examples", 3), ("Maintenance", 2)]
    assert title_from_members(headings, CENTRAL, 4) == "Maintenance"
    assert title_from_members(headings, CENTRAL, 4, usable=lambda h: h != "Maintenance") == "VACUUM"


def test_topics_take_a_heading_over_a_third_of_their_central_members():
    headings = [("Transaction IDs and XID Wraparound", 4), ("The Autovacuum Daemon", 3)]
    central = [f"member {i}" for i in range(12)]
    assert title_from_members(headings, central, 12) == "member 0"  # under half
    assert title_from_members(headings, central, 12, share=TOPIC_HEADING_SHARE) == "Transaction IDs and XID Wraparound"
