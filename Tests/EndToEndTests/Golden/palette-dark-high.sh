# appearanced palette: dark, high contrast
export APPEARANCE=dark
export PALETTE_FILL_BG='#000000'
export PALETTE_FILL_CARD='#3c3c3c'
export PALETTE_FILL_GAP='#202020'
export PALETTE_FILL_DIVIDER='#ffffff99'
export PALETTE_TEXT_TITLE='#ffffff'
export PALETTE_TEXT_DESC='#ffffffd9'
export PALETTE_TEXT_NOTE='#ffffffb3'
export PALETTE_ACCENT='#78aeed'
export PALETTE_WALLPAPER='/usr/share/backgrounds/gnome/adwaita-d.jpg'
