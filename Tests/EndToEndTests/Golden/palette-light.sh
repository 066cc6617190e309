# appearanced palette: light, normal contrast
export APPEARANCE=light
export PALETTE_FILL_BG='#ffffff'
export PALETTE_FILL_CARD='#fafafa'
export PALETTE_FILL_GAP='#f8f9fa'
export PALETTE_FILL_DIVIDER='#00000014'
export PALETTE_TEXT_TITLE='#262626'
export PALETTE_TEXT_DESC='#26262699'
export PALETTE_TEXT_NOTE='#26262666'
export PALETTE_ACCENT='#3584e4'
export PALETTE_WALLPAPER='/usr/share/backgrounds/gnome/adwaita-l.jpg'
