//! The rule table of the protocol-change gate: every kind of change the walker can find, and its
//! level per direction. `spec/versioning.md` documents this table row by row (a test keeps the two
//! in step); this file is the one place the levels live.

use std::fmt;

use chatwire_schema::Direction;

/// How serious a change is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Informational: compatible, listed for reviewers.
    Info,
    /// Compatible within a major version, but a reviewer should look (and a minor bump is due).
    Warn,
    /// Breaking: allowed only together with a protocol major-version change.
    Err,
}

impl Level {
    /// The fixed-width tag used in reports and in `--json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Err => "ERR",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way the schema's instances travel, as far as the gate knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// A frame (or document) a client sends: the server is the reader that must keep accepting it.
    ClientToServer,
    /// A frame (or document) a server sends: a client written against the old schema reads it.
    ServerToClient,
    /// Neither direction is known: every change in what the schema accepts counts as breaking.
    Unknown,
}

impl Flow {
    /// The name used in `--json` and in the spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Flow::ClientToServer => "client-to-server",
            Flow::ServerToClient => "server-to-client",
            Flow::Unknown => "unknown",
        }
    }

    /// The arrow used in human-readable lines.
    pub fn arrow(self) -> &'static str {
        match self {
            Flow::ClientToServer => "client→server",
            Flow::ServerToClient => "server→client",
            Flow::Unknown => "direction unknown",
        }
    }
}

impl From<Direction> for Flow {
    fn from(d: Direction) -> Self {
        match d {
            Direction::ClientToServer => Flow::ClientToServer,
            Direction::ServerToClient => Flow::ServerToClient,
        }
    }
}

/// Declares the rule enum and its table from one list: id, level for client→server, level for
/// server→client, and the reason shown after the change for each direction.
macro_rules! rules {
    ($( $variant:ident => $id:literal, $c2s:ident, $s2c:ident, $why_c2s:literal, $why_s2c:literal; )*) => {
        /// A kind of schema change. Levels: [`Rule::level`]; ids: [`Rule::id`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $(
                #[doc = concat!("`", $id, "`: ", $why_c2s, " / ", $why_s2c)]
                $variant,
            )*
        }

        impl Rule {
            /// Every rule, in table order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable id (fixture directory names and `--json` use it).
            pub fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// The level of this change for a schema read in `flow`; an unknown direction takes
            /// the more severe of the two.
            pub fn level(self, flow: Flow) -> Level {
                let (c2s, s2c) = match self { $(Rule::$variant => (Level::$c2s, Level::$s2c),)* };
                match flow {
                    Flow::ClientToServer => c2s,
                    Flow::ServerToClient => s2c,
                    Flow::Unknown => c2s.max(s2c),
                }
            }

            /// Why the change has its level in `flow`, for the report line.
            pub fn why(self, flow: Flow) -> &'static str {
                let (c2s, s2c) = match self { $(Rule::$variant => ($why_c2s, $why_s2c),)* };
                match flow {
                    Flow::ClientToServer => c2s,
                    Flow::ServerToClient => s2c,
                    Flow::Unknown if self.level(Flow::ClientToServer) >= self.level(Flow::ServerToClient) => c2s,
                    Flow::Unknown => s2c,
                }
            }
        }
    };
}

rules! {
    MessageAdded => "message-added", Info, Err,
        "servers accept a new message; clients send it only on a version that has it",
        "clients may not handle the new message";
    NegotiatedAddition => "negotiated-addition", Info, Info,
        "added in a newer minor (x-chatwire-since); only clients that negotiated it send it",
        "added in a newer minor (x-chatwire-since); only clients that negotiated it receive it";
    MessageRemoved => "message-removed", Err, Warn,
        "servers no longer accept a message clients send",
        "clients stop receiving a message they may rely on";
    DocumentAdded => "document-added", Info, Info,
        "a new published document; nothing reads it yet",
        "a new published document; nothing reads it yet";
    DocumentRemoved => "document-removed", Err, Err,
        "readers of the published document lose it",
        "readers of the published document lose it";
    RequiredPropertyAdded => "required-property-added", Err, Warn,
        "servers reject frames from clients that do not send it",
        "clients ignore members they do not know; negotiate before sending it";
    OptionalPropertyAdded => "optional-property-added", Info, Warn,
        "servers accept a new optional member",
        "clients ignore members they do not know; negotiate before sending it";
    OpenObjectPropertyAdded => "open-object-property-added", Err, Info,
        "a member that took any value is now constrained",
        "a member that took any value is now constrained";
    RequiredPropertyRemoved => "required-property-removed", Err, Err,
        "servers no longer accept or read a member every client sends",
        "clients may read a member that is no longer sent";
    OptionalPropertyRemoved => "optional-property-removed", Err, Warn,
        "servers reject frames that still carry the member",
        "clients lose a member they may show";
    OpenObjectPropertyRemoved => "open-object-property-removed", Warn, Warn,
        "the member is still accepted but no longer described or read",
        "the member may still arrive but is no longer described";
    PropertyMadeRequired => "property-made-required", Err, Info,
        "servers reject frames from clients that omit it",
        "clients always receive a member they already handled";
    PropertyMadeOptional => "property-made-optional", Info, Err,
        "servers accept frames without the member",
        "clients may not handle the member being absent";
    AdditionalPropertiesClosed => "additional-properties-closed", Err, Info,
        "servers reject members they used to accept",
        "clients receive fewer unknown members";
    AdditionalPropertiesOpened => "additional-properties-opened", Info, Err,
        "servers accept more members",
        "clients may meet members their schema rejects";
    TypeWidened => "type-widened", Info, Err,
        "servers accept more types",
        "clients may not handle the new type";
    TypeNarrowed => "type-narrowed", Err, Info,
        "servers reject a type they used to accept",
        "clients receive fewer types";
    TypeChanged => "type-changed", Err, Err,
        "servers reject the old type",
        "clients may not handle the new type";
    NullableAdded => "nullable-added", Info, Err,
        "servers accept null",
        "clients may not handle null";
    NullableRemoved => "nullable-removed", Err, Info,
        "servers reject null they used to accept",
        "clients no longer receive null";
    EnumValueAdded => "enum-value-added", Info, Err,
        "servers accept a new value",
        "clients may not handle it";
    EnumValueRemoved => "enum-value-removed", Err, Info,
        "servers reject a value clients may send",
        "clients no longer receive the value";
    ValueSetAdded => "value-set-added", Err, Info,
        "servers accept only listed values now",
        "clients receive only listed values now";
    ValueSetRemoved => "value-set-removed", Info, Err,
        "servers accept any value of the type",
        "clients may receive values outside the old list";
    VariantAdded => "variant-added", Info, Err,
        "servers accept a new variant",
        "clients may not handle the new variant";
    VariantRemoved => "variant-removed", Err, Info,
        "servers reject a variant clients may send",
        "clients no longer receive the variant";
    BoundAdded => "bound-added", Err, Info,
        "servers reject values outside the new bound",
        "clients receive values within the new bound";
    BoundRemoved => "bound-removed", Info, Err,
        "servers accept values beyond the old bound",
        "clients may receive values beyond the old bound";
    BoundTightened => "bound-tightened", Err, Info,
        "servers reject values the old bound allowed",
        "clients receive values within the tighter bound";
    BoundRelaxed => "bound-relaxed", Info, Err,
        "servers accept values beyond the old bound",
        "clients may receive values beyond the old bound";
    PatternAdded => "pattern-added", Err, Info,
        "servers reject strings the pattern does not match",
        "clients receive only matching strings";
    PatternRemoved => "pattern-removed", Info, Err,
        "servers accept any string",
        "clients may receive strings the old pattern excluded";
    PatternChanged => "pattern-changed", Err, Err,
        "servers may reject strings the old pattern matched",
        "clients may receive strings the old pattern excluded";
    FormatAdded => "format-added", Err, Info,
        "servers reject values outside the format (the Rust types enforce integer formats)",
        "clients receive values within the format";
    FormatRemoved => "format-removed", Info, Err,
        "servers accept values outside the old format",
        "clients may receive values outside the old format";
    FormatNarrowed => "format-narrowed", Err, Info,
        "servers reject integers the old format allowed",
        "clients receive integers within the narrower format";
    FormatWidened => "format-widened", Info, Err,
        "servers accept integers beyond the old format",
        "clients may receive integers beyond the old format";
    FormatChanged => "format-changed", Err, Err,
        "servers may reject values the old format allowed",
        "clients may receive values the old format excluded";
    ConstraintAdded => "constraint-added", Err, Info,
        "servers reject values the new constraint excludes",
        "clients receive values within the new constraint";
    ConstraintRemoved => "constraint-removed", Info, Err,
        "servers accept values the old constraint excluded",
        "clients may receive values the old constraint excluded";
    ConstraintChanged => "constraint-changed", Err, Err,
        "servers may reject values they used to accept",
        "clients may receive values they did not expect";
    SchemaRestructured => "schema-restructured", Err, Err,
        "the gate cannot prove the new shape accepts every old frame",
        "the gate cannot prove the new shape stays within what clients expect";
    UnknownKeywordChanged => "unknown-keyword-changed", Err, Err,
        "the gate does not know this keyword and cannot prove the change compatible",
        "the gate does not know this keyword and cannot prove the change compatible";
    UnresolvableRef => "unresolvable-ref", Err, Err,
        "the gate cannot follow the reference",
        "the gate cannot follow the reference";
    DialectChanged => "dialect-changed", Warn, Warn,
        "validators interpret the schema under another draft",
        "validators interpret the schema under another draft";
    DeprecatedAdded => "deprecated-added", Warn, Warn,
        "clients should stop sending it; removal needs a major version",
        "clients should stop relying on it; removal needs a major version";
    DeprecatedRemoved => "deprecated-removed", Info, Info,
        "no longer deprecated",
        "no longer deprecated";
    AnnotationChanged => "annotation-changed", Info, Info,
        "documentation only",
        "documentation only";
}
