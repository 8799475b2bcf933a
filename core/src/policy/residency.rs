//! Residency: which sovereignty classes and regions an endpoint may have.
//!
//! A policy's `residency_allowed` lists classes and regions; a request may name a residency
//! (`eu-hosted`, `eu-owned`, `any`, or an EU/EEA country code such as `de`), which can only
//! narrow the policy: the classes an endpoint may have are those both admit, and the named
//! residency's region scope applies on top of the policy's regions.

use crate::policy::SovereigntyClass;

/// EU member states and the EEA (Iceland, Liechtenstein, Norway), as region prefixes.
const EU_EEA: [&str; 30] = [
    "at", "be", "bg", "hr", "cy", "cz", "dk", "ee", "fi", "fr", "de", "gr", "hu", "ie", "it", "lv", "lt", "lu", "mt",
    "nl", "pl", "pt", "ro", "sk", "si", "es", "se", "is", "li", "no",
];

/// The country (or cloud area) of a region: what comes before its first dash (`de-ber` → `de`,
/// `eu-central-1` → `eu`).
fn area(region: &str) -> &str {
    region.split_once('-').map_or(region, |(area, _)| area)
}

/// Whether a region is in the EU/EEA: an EU/EEA country, or a cloud region of the `eu-` area.
pub fn region_in_eu(region: &str) -> bool {
    let area = area(region);
    area == "eu" || EU_EEA.contains(&area)
}

/// Where a region must be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionScope {
    Anywhere,
    Eu,
    /// One country, by its code.
    Country(Box<str>),
}

impl RegionScope {
    pub fn contains(&self, region: &str) -> bool {
        match self {
            RegionScope::Anywhere => true,
            RegionScope::Eu => region_in_eu(region),
            RegionScope::Country(code) => area(region) == &**code,
        }
    }
}

/// A residency a request names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Residency {
    /// The name as asked, for the route reason and the 409.
    pub name: Box<str>,
    pub classes: Vec<SovereigntyClass>,
    pub scope: RegionScope,
}

const EU_HOSTED: [SovereigntyClass; 2] = [SovereigntyClass::EuOwnedEuOperated, SovereigntyClass::EuRegionOfNonEuParent];

impl Residency {
    /// The named residencies: `eu-owned` (EU-owned, EU-operated, in the EU), `eu-hosted` (both EU
    /// classes, in the EU), `any` (every addressable class, anywhere), and an EU/EEA country code
    /// (`de`: both EU classes, in that country). `catalogue_unknown` is in none.
    pub fn named(name: &str) -> Option<Residency> {
        let (classes, scope) = match name {
            "eu-owned" => (vec![SovereigntyClass::EuOwnedEuOperated], RegionScope::Eu),
            "eu-hosted" => (EU_HOSTED.to_vec(), RegionScope::Eu),
            "any" => (
                SovereigntyClass::ALL.into_iter().filter(|c| *c != SovereigntyClass::CatalogueUnknown).collect(),
                RegionScope::Anywhere,
            ),
            code if EU_EEA.contains(&code) => (EU_HOSTED.to_vec(), RegionScope::Country(code.into())),
            _ => return None,
        };
        Some(Residency { name: name.into(), classes, scope })
    }

    /// The names a request may use, for an error message.
    pub const NAMES: &'static str = "eu-owned, eu-hosted, any, or an EU/EEA country code (de, fr, nl, …)";
}

/// A policy's `residency_allowed`: sovereignty classes, and regions (a country code, a whole
/// region such as `de-ber`, or `eu`); no region means any region its classes allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResidencyAllowed {
    pub classes: Vec<SovereigntyClass>,
    pub regions: Vec<Box<str>>,
}

impl Default for ResidencyAllowed {
    /// The spec's default: both EU classes.
    fn default() -> Self {
        ResidencyAllowed { classes: EU_HOSTED.to_vec(), regions: Vec::new() }
    }
}

impl ResidencyAllowed {
    /// Reads one value of the list: a class name, else a region.
    pub fn add(&mut self, value: &str) {
        match SovereigntyClass::from_name(value) {
            Some(class) if !self.classes.contains(&class) => self.classes.push(class),
            Some(_) => {}
            None => self.regions.push(value.into()),
        }
    }

    /// Whether the region is among the regions the policy names (any, when it names none).
    pub fn admits_region(&self, region: &str) -> bool {
        self.regions.is_empty()
            || self
                .regions
                .iter()
                .any(|r| &**r == region || &**r == area(region) || (&**r == "eu" && region_in_eu(region)))
    }

    /// How a request that names no residency is described: `eu-hosted` while every class the
    /// policy admits is EU-hosted, else `any`.
    pub fn description(&self) -> &'static str {
        if self.classes.iter().all(|c| c.is_eu_hosted()) {
            "eu-hosted"
        } else {
            "any"
        }
    }
}
