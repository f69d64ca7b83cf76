"""The line an overview gives each member: what the member's own page says it is, or nothing."""

from __future__ import annotations

from compendium.export.outline_view import described_in, line_after, without_listed_related


def test_a_member_line_is_what_its_page_says_it_is_after_its_name():
    assert line_after("LOGGING", "LOGGING: A data structure containing configuration information.") == \
        ": A data structure containing configuration information."
    assert line_after("Hot Standby", "Hot Standby is the mode in which a standby answers queries.") == \
        " is the mode in which a standby answers queries."
    # An article, a keyword or a signature around the name is the page's, not the line's.
    assert line_after("abandoned slot", "An abandoned slot is a common cause of a full disk.") == \
        " is a common cause of a full disk."
    assert line_after("ArrayField", "class ArrayField(base_field, size=None): A field for storing lists of data.") == \
        ": A field for storing lists of data."
    assert line_after("git-blame", "git-blame(1): Show what revision last modified each line") == \
        ": Show what revision last modified each line"
    assert line_after("logical replication", "Logical replication copies changes to individual tables.") == \
        " copies changes to individual tables."
    # A call's parentheses give way to its signature; an owner before the name is the page's too.
    assert line_after("mail_admins()", "mail_admins(subject, message): mail_admins() is a shortcut for mailing.") == \
        ": mail_admins() is a shortcut for mailing."
    assert line_after("get_absolute_url()", "Model.get_absolute_url(): Tell Django how to find an object.") == \
        ": Tell Django how to find an object."
    # The kind of thing the member is, then what it is.
    assert line_after("GeoIP2", "The GeoIP2 object is a wrapper for the geoip2 library.") == \
        " object is a wrapper for the geoip2 library."


def test_a_section_says_what_it_holds_and_a_sentence_about_something_else_is_no_line():
    assert line_after("Built-in tags", "This document describes the built-in template tags.") == \
        " — This document describes the built-in template tags."
    # About the member without saying what it is, or about another subject merged into its page.
    assert line_after("SSH", "SSH has no concept of trust levels like gpg does.") == ""
    assert line_after("CVS", "CVS users are accustomed to giving a group commit access.") == ""
    assert line_after("Random()", "random: Returns a random item from the given list.") == ""
    assert line_after("Quick install guide", "Before you can use Django, you need to install it.") == ""
    assert line_after("Anything", "") == ""
    assert line_after("PyMemcacheCache", "The PyMemcacheCache backend was added.") == ""
    assert line_after("django.core.mail", "django.core.mail.outbox: During tests, each email is saved.") == ""


def test_an_overview_that_lists_a_member_with_its_line_already_is_not_given_another():
    markdown = ("# Replication\n\nWhat it is.[^1]\n\n## Members\n\n- [[hot-standby|Hot Standby]] is a mode.[^2]\n\n"
                "## Related\n\n- [[logical-replication|logical replication]]\n")
    assert described_in(markdown) == {"hot-standby"}  # a bare related link says nothing


def test_a_part_of_the_manual_is_said_by_its_opening():
    # A subtopic or a document's page: its opening says what the part holds, whatever its words.
    assert line_after("Quick install guide", "Before you can use Django, you need to install it.", part=True) == \
        " — Before you can use Django, you need to install it."
    assert line_after("Quick install guide", "", part=True) == ""


def test_a_member_line_reads_the_shapes_reference_entries_are_written_in():
    # A dash as the term's separator, a remark before the colon.
    assert line_after("QUERY_STRING", "QUERY_STRING – The query string, as a single (unparsed) string.") == \
        " – The query string, as a single (unparsed) string."
    assert line_after("sendemail.signedoffcc", "sendemail.signedoffcc (deprecated): Deprecated alias for X.") == \
        " (deprecated): Deprecated alias for X."
    # The code name's kind, then what it does.
    assert line_after("AM_GNU_GETTEXT", "The AM_GNU_GETTEXT macro tests for the presence of gettext.") == \
        " macro tests for the presence of gettext."
    assert line_after("django.db.models.signals", "The django.db.models.signals module defines a set of signals.") == \
        " module defines a set of signals."
    # A module's page opening on what the module does; a command's page on its man page's NAME line.
    assert line_after("sphinx.ext.duration", "This extension measures durations of Sphinx processing.") == \
        " — This extension measures durations of Sphinx processing."
    assert line_after("git log", "git-log(1): Show commit logs.") == ": Show commit logs."
    # An API entry written with its keyword defines the call its member's title names.
    assert line_after("TransactionNow()", "class TransactionNow: Returns the time the transaction started.") == \
        ": Returns the time the transaction started."
    # A name its page writes in quotes.
    assert line_after("cat_sort_uniq", '"cat_sort_uniq" concatenates the versions, then sorts the lines.') == \
        ' concatenates the versions, then sorts the lines.'
    # Still no line: a kind that is not a code name's, or what happened to it.
    assert line_after("PyMemcacheCache", "The PyMemcacheCache backend was added.") == ""
    assert line_after("Random()", "random: Returns a random item from the given list.") == ""


def test_a_line_that_says_when_what_follows_what_it_is_like_or_what_is_done_with_it_is_no_line():
    assert line_after("error_messages", "error_messages: New in Django 3.2.") == ""
    assert line_after("AsGeoJSON", "AsGeoJSON: Availability: MariaDB, MySQL, Oracle, PostGIS") == ""
    assert line_after("django.utils.dateparse", "django.utils.dateparse: The functions share the following properties:") == ""
    assert line_after("cat_sort_uniq", '"cat_sort_uniq" is similar to "union", but also sorts the lines.') == ""
    assert line_after("send()", "send() differs from send_robust() in how exceptions are handled.") == ""
    assert line_after("log message", "log message is read from the standard input, unless -m is given.") == ""
    assert line_after("static files", "static files are automatically served by the development server.") == ""
    assert line_after("PATCH", 'PATCH, which is the "diff -p --stat" output between the commit and its parent.') == ""
    assert line_after("PO-Revision-Date", "PO-Revision-Date: You don't need to fill this in.") == ""
    assert line_after("DOTALL", "DOTALL is also known as single-line mode in Perl.") == ""
    assert line_after("django.utils.translation", "django.utils.translation: For the usage of the following see X.") == ""
    assert line_after("Atom1Feed", "Atom1Feed: Spec: RFC 4287") == ""  # a field of its entry
    assert line_after("CurrentSiteManager", "CurrentSiteManager: If Site matters, consider using the manager.") == ""
    assert line_after("django.utils.html", "django.utils.html: Usually you should build up HTML using templates.") == ""
    # What it is used for still says what it is.
    assert line_after("toc extension", "toc extension is used by MkDocs to generate an ID for every header.") == \
        " is used by MkDocs to generate an ID for every header."


def test_a_part_is_not_said_by_an_opening_that_leans_on_its_neighbours_or_is_a_members_entry():
    assert line_after("GeoDjango Installation", "Details are provided in the sections below.", part=True) == ""
    assert line_after("sphinx-autogen", "The sphinx-autogen script is also able to generate stubs.", part=True) == ""
    assert line_after("Automatic documentation", "Fortunately, the autodoc extension provides this.", part=True) == ""
    assert line_after("Measurement Objects", "class A: Alias for Area class.", part=True) == ""
    assert line_after("gitcore-tutorial(7)", "gitcore-tutorial: A Git core tutorial for developers", part=True) == \
        " — gitcore-tutorial: A Git core tutorial for developers"


def test_an_overview_shows_a_member_once_its_related_links_that_its_node_lists_go():
    page = ("# Replication\n\nWhat it is.[^1]\n\n## Related\n\n- [[hot-standby|Hot Standby]]\n- [[wal|WAL]]\n\n"
            "[^1]: source\n")
    assert without_listed_related(page, {"hot-standby"}) == page.replace("- [[hot-standby|Hot Standby]]\n", "")
    # A Related section left empty goes with its heading; the notes stay.
    assert without_listed_related(page, {"hot-standby", "wal"}) == "# Replication\n\nWhat it is.[^1]\n\n[^1]: source\n"
    assert without_listed_related(page, set()) == page
