package dev.nepenthe.core.internal.engine;

import java.util.regex.Pattern;

/**
 * A {@code derivedFrom} entry read as the record it names. A plain id names a record of the
 * deriving record's own collection; {@code @<collection>/<id>} names a record in another collection
 * (or, spelled out, the same one) of the deriving record's tenant. There is no spelling for another
 * tenant: {@code @<tenant>:<collection>/<id>} is refused, since tenants are isolated and provenance
 * never crosses them.
 *
 * <p>Why a mark in front rather than plain {@code collection/id}: ids are free strings, and paths
 * and URLs ("docs/intro.md", "s3://bucket/key") are common ones, which a slash rule would have
 * turned into references to collections that do not exist. An id starting with '@' is now refused
 * in {@code derivedFrom} unless it is a well-formed reference; a stored entry written before
 * references existed that is not one still reads as a plain id.
 *
 * @param collection the collection the source is in, or null for the deriving record's own
 * @param id the source's id
 */
public record DerivedFromRef(String collection, String id) {

    /** The first character of a reference to a record in another collection. */
    public static final char MARK = '@';

    /** A collection name, as {@code CollectionSpec} allows it. */
    private static final Pattern COLLECTION = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /**
     * The bytes a reference adds to an id at most: the mark, a 64-character collection name, the
     * slash.
     */
    public static final int MAX_PREFIX_BYTES = 66;

    /**
     * Reads an entry as stored; leniently: an entry that starts with the mark but is not a
     * well-formed reference (written before references existed) reads as a plain id.
     */
    public static DerivedFromRef read(String entry) {
        if (entry.length() > 2 && entry.charAt(0) == MARK) {
            int slash = entry.indexOf('/');
            if (slash > 1
                    && COLLECTION.matcher(entry.substring(1, slash)).matches()
                    && !entry.substring(slash + 1).isBlank()) {
                return new DerivedFromRef(entry.substring(1, slash), entry.substring(slash + 1));
            }
        }
        return new DerivedFromRef(null, entry);
    }

    /**
     * The entry that names {@code id} in {@code collection} from a record of another collection.
     */
    public static String spell(String collection, String id) {
        return MARK + collection + "/" + id;
    }

    /**
     * The source as the forget engine keys records across collections: collection, NUL, id.
     *
     * @param holder the collection of the record whose {@code derivedFrom} holds this entry
     */
    public String key(String holder) {
        return (collection == null ? holder : collection) + '\0' + id;
    }

    /**
     * Checks an entry of a record about to be written: one that starts with the mark must be a
     * well-formed reference. The message says what was expected and what arrived by its shape,
     * never by its content (ids may carry personal data).
     *
     * @throws IllegalArgumentException naming {@code where} and {@code field}
     */
    static void check(String entry, String field, String where) {
        if (!entry.isEmpty() && entry.charAt(0) == MARK) {
            checkReference(entry, where + ": " + field);
        }
    }

    /**
     * Checks a reference (an entry that starts with the mark).
     *
     * @param what names the entry in the message ("record 3 of the batch: derivedFrom[1]")
     * @throws IllegalArgumentException saying what was expected and what arrived, by shape
     */
    public static void checkReference(String entry, String what) {
        String expected =
                what
                        + " expected a record id, or '@<collection>/<id>' naming a record in"
                        + " another collection of the record's tenant (the collection 1 to 64"
                        + " letters, digits, '_' or '-'), got ";
        int slash = entry.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException(expected + "'@' and no '/'");
        }
        String collection = entry.substring(1, slash);
        if (collection.indexOf(':') >= 0) {
            throw new IllegalArgumentException(
                    what
                            + " expected a record of the record's own tenant"
                            + " ('@<collection>/<id>'), got a reference naming a tenant"
                            + " ('@<tenant>:<collection>/<id>'): a record derives only from records"
                            + " of its own tenant, which a reference never names");
        }
        if (collection.isEmpty()) {
            throw new IllegalArgumentException(expected + "no collection name between '@' and '/'");
        }
        if (!COLLECTION.matcher(collection).matches()) {
            throw new IllegalArgumentException(
                    expected
                            + "a collection name of "
                            + collection.length()
                            + " characters"
                            + (collection.length() > 64 ? "" : " holding other characters"));
        }
        if (entry.substring(slash + 1).isBlank()) {
            throw new IllegalArgumentException(expected + "no id after '@" + collection + "/'");
        }
    }
}
